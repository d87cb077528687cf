import Synchronization

/// What `/ready` decides on: whether the XMPP component is connected and when the homeserver last answered.
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

    public init(homeserverWindow: Duration = .seconds(60)) {
        self.homeserverWindow = homeserverWindow
    }

    /// This process is (true) or is no longer (false) the standby of an active/standby pair (`ha.enabled`).
    public func setStandby(_ value: Bool) { standby.store(value, ordering: .relaxed) }

    /// Whether this process is the standby of a pair: not ready, whatever else holds.
    public var isStandby: Bool { standby.load(ordering: .relaxed) }

    /// The XMPP component connected (true) or lost its connection (false).
    public func xmppConnected(_ value: Bool) { connected.store(value, ordering: .relaxed) }

    /// The homeserver answered a call successfully (any client call, the appservice ping, the periodic check).
    public func homeserverAnswered(at instant: ContinuousClock.Instant = .now) {
        lastAnswer.withLock { $0 = max($0 ?? instant, instant) }
    }

    /// When the homeserver last answered.
    public var lastHomeserverAnswer: ContinuousClock.Instant? { lastAnswer.withLock { $0 } }

    /// Ready when the component is connected and the homeserver answered within ``homeserverWindow`` of `now`;
    /// never while standing by.
    public func verdict(now: ContinuousClock.Instant = .now) -> Verdict {
        if isStandby { return Verdict(reasons: ["this instance is the standby; another holds the bridge lease"]) }
        var reasons: [String] = []
        if !connected.load(ordering: .relaxed) { reasons.append("the XMPP component is not connected") }
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
