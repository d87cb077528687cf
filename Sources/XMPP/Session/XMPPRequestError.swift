/// Why one request over an XMPP session (an IQ, a join, an archive query) failed, the same on the component and
/// the client link. The link's own failures (not connected, the connection lost) keep their link's error type.
public enum XMPPRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No answer came in time; the label names the request (`iq 5f3a… to room@conference.localhost`).
    case timeout(String)
    /// The entity answered with an error.
    case requestFailed(StanzaError)
    /// The entity answered with something we did not expect.
    case unexpectedResponse(String)
    /// Another request of the same kind for the same occupant and room is still waiting.
    case requestInProgress(String)
    /// A nick that is not a valid JID resource.
    case invalidNick(String)

    public var description: String {
        switch self {
        case .timeout(let request): "timed out waiting for the response to \(request)"
        case .requestFailed(let error): "the request was refused: \(error)"
        case .unexpectedResponse(let what): "unexpected response: \(what)"
        case .requestInProgress(let what): "a request is already waiting: \(what)"
        case .invalidNick(let nick): "'\(nick)' is not a valid nick"
        }
    }
}
