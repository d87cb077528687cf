import IsthmusCommon
import XMLStream

/// Sending stanzas, and what the shared request logic (``StanzaSession``: IQs, MUC joins, archive queries) needs of
/// the component connection. On the ``ComponentConnection`` actor.
extension ComponentConnection: StanzaSession {
    /// Writes `stanza` after everything sent before it. Does not wait for the server.
    ///
    /// - Throws: ``ComponentError/notConnected`` when the link is not up (nothing is queued for later);
    ///   ``ComponentError/fromOutsideComponentDomain(_:)`` when `from` is missing or not in the component domain —
    ///   checked here because the server would kill the whole link with `<invalid-from/>`.
    public func send(_ stanza: Stanza) throws(ComponentError) {
        guard let link, !link.finished else { throw .notConnected }
        try link.machine.validateOutgoing(stanza)
        do {
            try link.socket.write(XMLSerializer.bytes(of: stanza.element))
        } catch {
            throw .notConnected
        }
    }

    package var requestTimeout: Duration { configuration.requestTimeout }
    package var sessionClock: TimeSource { configuration.timeSource }
    package var sessionLogger: Logger { logger }
    /// The component itself.
    package var defaultRequester: JID? { configuration.componentJID }
}
