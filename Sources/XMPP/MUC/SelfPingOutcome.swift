/// What a XEP-0410 self-ping says about an occupant (§3.2 and §4).
public enum SelfPingOutcome: Sendable, Hashable {
    /// Still joined: a result, or `service-unavailable`/`feature-not-implemented` from the occupant's client.
    case joined
    /// Still joined under another nick (`item-not-found`): the ping went to a nick we no longer have.
    case nickChanged
    /// Not joined (`not-acceptable` and most other errors): rejoin.
    case notJoined(StanzaError)
    /// No conclusion (`remote-server-timeout`/`remote-server-not-found`, or no answer in time): try again later.
    case inconclusive

    /// Classifies the answer to a self-ping (nil: no answer before the deadline).
    public init(response: IQ?) {
        guard let response else {
            self = .inconclusive
            return
        }
        switch response.type {
        case .result:
            self = .joined
        case .error:
            let error = response.error ?? StanzaError(type: .cancel, condition: .undefinedCondition)
            switch error.condition {
            case .serviceUnavailable, .featureNotImplemented: self = .joined
            case .itemNotFound: self = .nickChanged
            case .remoteServerTimeout, .remoteServerNotFound: self = .inconclusive
            default: self = .notJoined(error)
            }
        case .get, .set:
            self = .inconclusive
        }
    }
}
