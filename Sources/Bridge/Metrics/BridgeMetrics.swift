import IsthmusCommon
import IsthmusMetrics
import IsthmusStore
import Synchronization

/// The bridge's metrics by name (see docs/deploy.md, "Monitoring"), on one ``MetricsRegistry``. Thread-safe; one
/// instance per running bridge, passed down in ``BridgeContext`` and to ``AppServiceMatrixLink``.
///
/// Labels carry only fixed vocabularies (directions, kinds, reasons, methods, statuses) — never user or room ids.
public final class BridgeMetrics: Sendable {
    /// Which way a message went.
    public enum Direction: String, Sendable, CaseIterable {
        case xmppToMatrix = "xmpp_to_matrix"
        case matrixToXMPP = "matrix_to_xmpp"
    }

    /// What a bridged message was: `media` is a file message either way (a Matrix file as its link, an XMPP file
    /// fetched and uploaded, or its link when that failed).
    public enum MessageKind: String, Sendable {
        case text, emote, notice, media, edit, reaction, retraction

        /// The kind of a Matrix `msgtype`.
        init(_ msgtype: MessageType) {
            switch msgtype.rawValue {
            case "m.emote": self = .emote
            case "m.notice": self = .notice
            case "m.image", "m.file", "m.audio", "m.video": self = .media
            default: self = .text
            }
        }

        /// The kind of a message the bridge posts in Matrix.
        init(_ kind: OutgoingMatrixMessage.Kind) {
            switch kind {
            case .text: self = .text
            case .emote: self = .emote
            case .notice: self = .notice
            }
        }
    }

    /// Why a message could not be bridged (its sender was told).
    public enum FailureReason: String, Sendable {
        /// The homeserver refused the message for good (after the client's retries).
        case homeserverRefused = "homeserver_refused"
        /// The MUC refused it, or the sender's occupant could not join.
        case xmppRefused = "xmpp_refused"
    }

    /// The families, for scrapes.
    public let registry: MetricsRegistry
    /// Readiness inputs (XMPP connection, last homeserver answer).
    public let health: BridgeHealth
    /// Messages on their way, for the latency histogram and the kind label.
    let inFlight = InFlightMessages()
    /// Rooms opened on demand (``DynamicPortals``).
    public let gateway: GatewayMetrics

    private let messages: CounterFamily
    private let failures: CounterFamily
    private let latency: HistogramFamily
    private let links: GaugeFamily
    private let ghosts: Gauge
    private let puppets: Gauge
    private let inbox: Gauge
    private let transactions: Counter
    private let requests: CounterFamily
    private let requestDuration: HistogramFamily
    private let xmppConnected: Gauge
    private let xmppReconnects: Counter
    private let xmppSessions: CounterFamily
    private let xmppResent: Counter
    private let catchUp: CounterFamily
    private let archiveReads: Counter
    private let matrixSession: CounterFamily
    private let rateLimitWaits: Counter
    private let syncGaps: Counter
    private let encrypted: CounterFamily

    /// Bucket bounds of the latency histograms, seconds.
    static let latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]

    /// Registers every family (and the process metrics) on a new registry.
    public init(health: BridgeHealth = BridgeHealth()) {
        let registry = MetricsRegistry()
        self.registry = registry
        self.health = health
        messages = registry.counter("isthmus_messages_total", help: "Messages bridged, counted once when delivered.",
                                    labels: ["direction", "kind"])
        failures = registry.counter("isthmus_message_failures_total",
                                    help: "Messages that could not be bridged (their sender was told).", labels: ["direction", "reason"])
        latency = registry.histogram("isthmus_bridge_latency_seconds",
                                     help: "Time from a message entering the bridge to its delivery on the other side.",
                                     labels: ["direction"], buckets: Self.latencyBuckets)
        links = registry.gauge("isthmus_links", help: "Linked room pairs by status.", labels: ["status"])
        ghosts = registry.gauge("isthmus_ghosts", help: "Matrix ghost users registered for XMPP occupants.").labels()
        puppets = registry.gauge("isthmus_puppets", help: "XMPP occupants held for Matrix users, one per room and user.").labels()
        inbox = registry.gauge("isthmus_inbox_depth", help: "Matrix events accepted from the homeserver and not yet handled.").labels()
        transactions = registry.counter("isthmus_homeserver_transactions_total",
                                        help: "New transactions the homeserver pushed (retries of processed ones excluded).").labels()
        requests = registry.counter("isthmus_homeserver_requests_total", help: "Client-server API calls to the homeserver.",
                                    labels: ["method", "outcome"])
        requestDuration = registry.histogram("isthmus_homeserver_request_duration_seconds",
                                             help: "Duration of client-server API calls, the client's own retries included.",
                                             labels: ["method"], buckets: Self.latencyBuckets)
        xmppConnected = registry.gauge("isthmus_xmpp_connected", help: "1 while the XMPP link (the component, or the account in client mode) is connected, else 0.").labels()
        xmppReconnects = registry.counter("isthmus_xmpp_reconnects_total",
                                          help: "Times the XMPP link connected again after losing its connection.").labels()
        xmppSessions = registry.counter("isthmus_xmpp_session_resumptions_total",
                                        help: "Client mode: XEP-0198 resumptions at a reconnection or a restart, by outcome (resumed, or failed: the server no longer held the session).",
                                        labels: ["outcome"])
        xmppResent = registry.counter("isthmus_xmpp_stanzas_resent_total",
                                      help: "Client mode: our stanzas sent again on a resumption (the server had not acknowledged them).").labels()
        catchUp = registry.counter("isthmus_catchup_messages_total",
                                   help: "Messages found by catch-up: the MUC archive (xmpp) or the Matrix timeline (matrix).",
                                   labels: ["side"])
        archiveReads = registry.counter("isthmus_xmpp_archive_catchups_total",
                                        help: "Reads of a MUC's archive for what the bridge missed (each activation of a link: a start, a reconnection, a rejoin), whatever they found.").labels()
        matrixSession = registry.counter("isthmus_matrix_session_events_total",
                                         help: "Matrix client mode: the account's token refreshes, logins, soft logouts (the homeserver ended the session softly) and stalls (the session needs the operator).",
                                         labels: ["event"])
        rateLimitWaits = registry.counter("isthmus_matrix_rate_limit_waits_total",
                                          help: "Waits the homeserver's rate limits (429) imposed on the bridge's calls before they went again.").labels()
        syncGaps = registry.counter("isthmus_matrix_sync_gaps_total",
                                    help: "Matrix client mode: rooms whose sync timeline was limited (a gap the room filled from its timeline).").labels()
        encrypted = registry.counter("isthmus_encrypted_events_total",
                                     help: "Encrypted Matrix events the bridge cannot read, by room kind (linked or direct); none is bridged.",
                                     labels: ["room"])
        gateway = GatewayMetrics(registry: registry)
        ProcessMetrics.register(in: registry)
        for kind in [MessageKind.text, .emote] { _ = messages.labels(Direction.xmppToMatrix.rawValue, kind.rawValue) }
        for kind in [MessageKind.text, .emote, .notice, .media] { _ = messages.labels(Direction.matrixToXMPP.rawValue, kind.rawValue) }
        _ = failures.labels(Direction.xmppToMatrix.rawValue, FailureReason.homeserverRefused.rawValue)
        _ = failures.labels(Direction.matrixToXMPP.rawValue, FailureReason.xmppRefused.rawValue)
        for direction in Direction.allCases { _ = latency.labels(direction.rawValue) }
        for status in ["pending", "active", "error"] { _ = links.labels(status) }
        for side in ["xmpp", "matrix"] { _ = catchUp.labels(side) }
        for outcome in ["resumed", "failed"] { _ = xmppSessions.labels(outcome) }
        for room in ["linked", "direct"] { _ = encrypted.labels(room) }
        for event in ["refreshed", "logged_in", "stalled"] { _ = matrixSession.labels(event) }
    }

    /// The scrape answer's text.
    public func exposition() -> String { registry.exposition() }

    // MARK: Messages

    /// A message was delivered (see the call sites for why each is once per message).
    func delivered(_ direction: Direction, kind: MessageKind, enteredAt: ContinuousClock.Instant?, now: ContinuousClock.Instant) {
        messages.labels(direction.rawValue, kind.rawValue).increment()
        if let enteredAt { latency.labels(direction.rawValue).observe(now - enteredAt) }
    }

    /// A message could not be bridged, for good.
    func failed(_ direction: Direction, _ reason: FailureReason) {
        failures.labels(direction.rawValue, reason.rawValue).increment()
    }

    /// Matrix client mode: the account's session changed (``MatrixAccount/SessionEvent``, as a label).
    func matrixSessionEvent(_ label: String) {
        matrixSession.labels(label).increment()
    }

    /// A rate limit made a call wait.
    public func rateLimitWaited() {
        rateLimitWaits.increment()
    }

    /// Matrix client mode: a sync's timeline for a room was limited.
    func syncGap(rooms: Int) {
        syncGaps.increment(by: UInt64(rooms))
    }

    /// A MUC's archive was read for what the bridge missed.
    func archiveRead() {
        archiveReads.increment()
    }

    /// Catch-up found `count` messages on `side` (`xmpp`: the MUC archive; `matrix`: the room's timeline).
    func caughtUp(side: String, count: Int) {
        guard count > 0 else { return }
        catchUp.labels(side).increment(by: UInt64(count))
    }

    /// An encrypted event was queued for its room (`direct`: a DM), once per event.
    func encryptedEvent(direct: Bool) {
        encrypted.labels(direct ? "direct" : "linked").increment()
    }

    // MARK: Connections

    /// A new homeserver transaction was accepted.
    func transactionAccepted() { transactions.increment() }

    /// The XMPP link's state changed.
    func xmppLink(connected: Bool, reconnected: Bool = false) {
        xmppConnected.set(connected ? 1 : 0)
        if connected && reconnected { xmppReconnects.increment() }
        health.xmppConnected(connected)
    }

    /// Client mode's session at a (re)connection.
    func xmppSession(_ change: XMPPSessionChange) {
        switch change {
        case .resumed(let resent):
            xmppSessions.labels("resumed").increment()
            xmppResent.increment(by: UInt64(resent))
        case .resumeFailed:
            xmppSessions.labels("failed").increment()
        }
    }

    /// A client-server call ended (`succeeded`: it returned a result). A success is an answer for readiness.
    public func homeserverRequest(_ method: HomeserverCall, succeeded: Bool, duration: Duration) {
        requests.labels(method.rawValue, succeeded ? "success" : "error").increment()
        requestDuration.labels(method.rawValue).observe(duration)
        if succeeded { health.homeserverAnswered() }
    }

    // MARK: Store gauges

    /// Sets the store-backed gauges from `counts`.
    func update(_ counts: StoreCounts) {
        for status in Set(["pending", "active", "error"]).union(counts.linksByStatus.keys) {
            links.labels(status).set(Double(counts.linksByStatus[status] ?? 0))
        }
        ghosts.set(Double(counts.ghosts))
        puppets.set(Double(counts.puppets))
        inbox.set(Double(counts.inbox))
    }

    /// Reads the store's counts into the gauges (before a scrape). Does store I/O; failures leave the last values.
    public func refresh(from store: Store) async {
        if let counts = try? await store.counts() { update(counts) }
    }
}
