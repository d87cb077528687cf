/// What the stream parser reports, in stream order.
public enum XMLStreamEvent: Sendable, Hashable {
    /// The root's start tag arrived (for XMPP the peer's `<stream:stream>`).
    case streamStart(StreamHeader)
    /// A depth-1 element closed: one complete stanza (or `<handshake/>`, `<stream:error>`, `<stream:features>`).
    case element(XElement)
    /// The root closed (`</stream:stream>`).
    case streamEnd
}
