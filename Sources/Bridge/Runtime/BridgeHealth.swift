import Synchronization

/// What `/ready` decides on: whether the XMPP link (the component, or in client mode the account) is connected and
/// when the homeserver last answered.
/// Updated from wherever those are observed; read by the operations listener. Thread-safe.
public final class BridgeHealth: Sendable {
    /// Why the bridge is not ready.
    public struct Verdict: Sendable, Equatable {
        /// Empty: ready.
        public var reasons: [String]
        public var ready: Bool { reasons.isEmpty }
    }

    /// How recent the homeserver's last answer must be.
    public let homeserverWindow: Duration
    private let connected = Atomic<Bool>(false)
    private let standby = Atomic<Bool>(false)
    private let lastAnswer = Mutex<ContinuousClock.Instant?>(nil)
    private let xmppLinkName = Mutex("the XMPP component")
    private let matrixAccountStall = Mutex<String?>(nil)

    public init(homeserverWindow: Duration = .seconds(60)) {
        self.homeserverWindow = homeserverWindow
    }

    /// Client mode: `/ready` speaks of the account's session, not of a component.
    public func setClientMode(account: String) {
        xmppLinkName.withLock { $0 = "the XMPP account \(account)" }
    }

    /// This process is (true) or is no longer (false) the standby of an active/standby pair (`ha.enabled`).
    public func setStandby(_ value: Bool) { standby.store(value, ordering: .relaxed) }

    /// Whether this process is the standby of a pair: not ready, whatever else holds.
    public var isStandby: Bool { standby.load(ordering: .relaxed) }

    /// Matrix client mode: what the account's session needs of the operator (nil: nothing, it works).
    public func setMatrixAccountStall(_ reason: String?) {
        matrixAccountStall.withLock { $0 = reason }
    }

    /// The XMPP link came up (true: the component's handshake, or the account logged in with its session bound or
    /// resumed) or went down (false).
    public func xmppConnected(_ value: Bool) { connected.store(value, ordering: .relaxed) }

    /// The homeserver answered a call successfully (any client call, the appservice ping, the periodic check).
    public func homeserverAnswered(at instant: ContinuousClock.Instant = .now) {
        lastAnswer.withLock { $0 = max($0 ?? instant, instant) }
    }

    /// When the homeserver last answered.
    public var lastHomeserverAnswer: ContinuousClock.Instant? { lastAnswer.withLock { $0 } }

    /// Ready when the XMPP link is up and the homeserver answered within ``homeserverWindow`` of `now`;
    /// never while standing by.
    public func verdict(now: ContinuousClock.Instant = .now) -> Verdict {
        if isStandby { return Verdict(reasons: ["this instance is the standby; another holds the bridge lease"]) }
        var reasons: [String] = []
        if !connected.load(ordering: .relaxed) { reasons.append("\(xmppLinkName.withLock { $0 }) is not connected") }
        if let stall = matrixAccountStall.withLock({ $0 }) { reasons.append("the bridge's Matrix account cannot act: \(stall)") }
        if let last = lastHomeserverAnswer {
            let silence = now - last
            if silence > homeserverWindow {
                reasons.append("the homeserver has not answered for \(silence.components.seconds) s")
            }
        } else {
            reasons.append("the homeserver has not answered yet")
        }
        return Verdict(reasons: reasons)
    }
}
