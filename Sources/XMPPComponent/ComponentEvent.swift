/// What the component connection reports to its one consumer (the bridge), in order.
public enum ComponentEvent: Sendable, Hashable {
    /// The handshake succeeded. `reconnected` is true after an earlier connection dropped: rejoin rooms and catch up
    /// through MAM (MUC occupants do not survive a component reconnect).
    case connected(reconnected: Bool)
    /// The connection ended with this error; a reconnect follows (with backoff) unless the connection was closed.
    case disconnected(ComponentError)
    /// A stanza for the bridge: every stanza not consumed as the answer to one of our own requests.
    case stanza(Stanza)
}
