import IsthmusCommon
import XMPP

/// What the client connection reports to its one consumer (the bridge), in order.
public enum ClientEvent: Sendable, Hashable {
    /// Stanzas may flow, as this full JID. `resumed`: the XEP-0198 session went on (the room occupancy with it);
    /// otherwise a new session: rejoin the rooms and catch up from their archives.
    case connected(JID, resumed: Bool)
    /// The session was resumed (``connected(_:resumed:)`` follows); this many of our stanzas were sent again.
    case resumed(resent: Int)
    /// The session could not be resumed: the server may or may not have handled these stanzas of ours (check the
    /// rooms' archives before sending any again).
    case resumeFailed(unknown: [Stanza])
    /// The server confirmed these stanzas of ours, oldest first.
    case acknowledged([Stanza])
    /// SASL succeeded with SCRAM: this salted password can be kept instead of the password.
    case authenticated(saltedPassword: SCRAMClient.SaltedPassword)
    /// The connection ended with this error; a reconnect follows (with backoff) unless the connection was closed.
    case disconnected(ClientError)
    /// A stanza for the bridge; call ``ClientConnection/handled(_:)`` with its ticket once its effect is durable.
    case stanza(Stanza, InboundTicket)
}
