/// Errors an ``XMPPLink`` reports that the bridge treats specially.
public enum XMPPLinkError: Error, Sendable, Equatable {
    /// The link is down; the operation can be retried once it reconnects.
    case notConnected
    /// The request timed out (no answer from the server).
    case timeout
    /// The server answered with a stanza error.
    case stanzaError(StanzaErrorInfo)
}
