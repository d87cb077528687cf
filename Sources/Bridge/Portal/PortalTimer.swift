/// A portal's timers: one of each kind may be pending; scheduling one replaces the pending one of its kind. The
/// ``Portal`` runs them on the injected clock (``BridgeContext/clock``) and queues ``event`` when one fires.
enum PortalTimer: Sendable, Hashable {
    /// Try the inbox again after an XMPP request timed out.
    case inboxRetry
    /// A drain waiting for one of our messages' reflection gives up waiting.
    case drainResume
    /// Typing notices and markers held back by a throttle are due.
    case ephemeralFlush

    /// What the portal queues when the timer fires.
    var event: PortalEvent {
        switch self {
        case .inboxRetry: .retryInbox
        case .drainResume: .resumeDrain
        case .ephemeralFlush: .flushEphemeral
        }
    }
}
