import IsthmusCommon
import Network
import XMLStream
import XMPP

/// The bridge's own XMPP account: one actor owning the c2s link (RFC 6120, XEP-0198).
///
/// ``run()`` connects, negotiates (``ClientStateMachine`` decides everything: TLS, SASL, resume or bind), keeps the
/// link alive and reconnects with backoff — resuming the XEP-0198 session when the server still holds it, so the
/// account's room occupancy survives a dropped connection. What arrives comes out of ``events`` in order for one
/// consumer, which calls ``handled()`` once a stanza's effect is durable: only then does it count in our acks.
/// Requests (IQs, MUC joins, archive queries: ``StanzaSession``) take their answers before the consumer sees them;
/// those count as handled as soon as every stanza delivered before them is. Does I/O; every method runs on the actor.
public actor ClientConnection {
    public nonisolated let configuration: ClientConfiguration
    /// Connection changes and stanzas, in order. Finishes when ``run()`` returns.
    public nonisolated let events: AsyncStream<ClientEvent>
    let eventSink: AsyncStream<ClientEvent>.Continuation
    let logger: Logger

    var link: ClientLink?
    var linkCount = 0
    var isRunning = false
    var closeRequested = false
    var closeWaiters: [CheckedContinuation<Void, Never>] = []
    /// Made at the first TLS handshake and kept.
    private var madeTLSContext: TLSContext?
    /// The latest connection attempt's way to the server: how it was found, what failed, what took the connection.
    public internal(set) var route: ServerRoute?
    package let iqWaiters = ResponseWaiters<StanzaAttributeID, JID?, IQ>()
    package let presenceWaiters = ResponseWaiters<OccupantKey, OccupantPresenceMatcher, OccupantPresenceMatcher.Match>()
    package var mamCollectors: [String: MAMCollector] = [:]
    /// Set by ``pauseReading()``: the read loop takes no more bytes (TCP back-pressure holds the server's).
    var readingPaused = false
    /// This link's inbound stanzas not yet counted in our acks: handled once an answer a request took, or once the
    /// consumer says so (``handled(_:)``). `h` only ever counts a handled prefix (XEP-0198 §4).
    var inbound = InboundLedger()
    /// Messages waiting for the send window (``awaitSendCapacity()``), woken by acknowledgements and the link's end.
    var capacityWaiters: [CheckedContinuation<Void, Never>] = []
    /// The session to resume on the next connection (kept from the last one, and by ``keeper`` across restarts).
    public internal(set) var resumption: ClientStateMachine.Resumption?
    /// Where the session is kept across restarts; nil: in memory only.
    let keeper: (any ClientSessionKeeper)?
    let keeping = KeepingState()
    /// What the logins left for the next (the salted password, a FAST token), kept by ``credentialKeeper``.
    public internal(set) var credentials: CredentialCache
    let credentialKeeper: (any ClientCredentialKeeper)?
    let keepingCredentials = KeepingState()

    /// `resuming`: a session kept from an earlier run, resumed on the first connection if the server still holds it;
    /// `keeper`: where each change of the session is kept for the next run (and, without `resuming`, where ``run()``
    /// reads the session to resume); `credentials`: what earlier runs' logins left, and `credentialKeeper`: where
    /// changes to them are kept.
    public init(configuration: ClientConfiguration, resuming: ClientStateMachine.Resumption? = nil,
                keeper: (any ClientSessionKeeper)? = nil, credentials: CredentialCache = CredentialCache(),
                credentialKeeper: (any ClientCredentialKeeper)? = nil, logger: Logger) {
        self.configuration = configuration
        self.resumption = resuming
        self.keeper = keeper
        self.credentials = credentials
        self.credentialKeeper = credentialKeeper
        var logger = logger
        logger[metadataKey: "xmpp.account"] = "\(configuration.stream.username)@\(configuration.stream.domain)"
        self.logger = logger
        (events, eventSink) = AsyncStream<ClientEvent>.makeStream()
    }

    /// What the current connection negotiated, for logs and `isthmus doctor`.
    public struct Negotiated: Sendable, Equatable {
        /// The bound (or resumed) full JID.
        public var jid: JID
        public var mechanism: SASLMechanismName?
        /// The TLS version (`TLSv1.3`); nil without TLS.
        public var tlsVersion: String?
        /// XEP-0198 is on, with resumption.
        public var resumable: Bool
        /// What SASL2 did, when the login used it.
        public var sasl2: ClientStateMachine.SASL2Use?

        /// `SCRAM-SHA-1 over SASL2 with Bind2, XEP-0198 inline, FAST offered`: how the login went, for logs and doctor.
        public var login: String { Self.login(mechanism: mechanism, sasl2: sasl2) }

        static func login(mechanism: SASLMechanismName?, sasl2: ClientStateMachine.SASL2Use?) -> String {
            let parts = sasl2.map { use in
                [use.bind2 ? "Bind2" : nil, use.inlineStreamManagement ? "XEP-0198 inline" : nil,
                 use.fastLogin ? "a FAST token" : use.fastOffered ? "FAST offered" : nil].compactMap { $0 }
            }
            let over = parts.map { " over SASL2" + ($0.isEmpty ? "" : " with " + $0.joined(separator: ", ")) } ?? ""
            return (mechanism?.rawValue ?? "no SASL") + over
        }
    }

    /// nil while not connected.
    public var negotiated: Negotiated? {
        guard let link, !link.finished, link.machine.isConnected, let jid = link.machine.jid else { return nil }
        return Negotiated(jid: jid, mechanism: link.machine.mechanism, tlsVersion: link.tls?.protocolVersion,
                          resumable: link.machine.streamManagement?.isResumable ?? false, sasl2: link.machine.sasl2)
    }

    /// Whether stanzas can be sent now.
    public var isConnected: Bool {
        guard let link, !link.finished else { return false }
        return link.machine.isConnected
    }

    /// Connects and stays connected until the task is cancelled (the link is dropped at once, the session left to
    /// resume) or ``close()`` is called (the stream is closed: the server ends the session). Call once.
    public func run() async {
        guard !isRunning else { return }
        isRunning = true
        defer {
            isRunning = false
            eventSink.finish()
            for waiter in closeWaiters { waiter.resume() }
            closeWaiters = []
        }
        await loadKeptSession()
        var backoff = ReconnectBackoff(initial: configuration.reconnectInitialDelay, maximum: configuration.reconnectMaximumDelay)
        var random = SystemRandomNumberGenerator()
        while !Task.isCancelled, !closeRequested {
            let (established, error) = await runLink()
            if established { backoff.reset() }
            guard let error, !Task.isCancelled, !closeRequested else { break }
            eventSink.yield(.disconnected(error))
            if error.retriesAtOnce {
                logger.notice("Logging in to the XMPP server again with the password", metadata: ["xmpp.error": error.description])
                continue
            }
            let delay = backoff.nextDelay(using: &random)
            logger.notice("Will reconnect to the XMPP server", metadata: [
                "xmpp.error": error.description, "xmpp.reconnect.delay": "\(delay)", "xmpp.reconnect.attempt": String(backoff.attempt)])
            await sleepUnlessClosed(delay)
        }
        await waitUntilKept()
    }

    /// Closes the stream gracefully (`<a/>`, `</stream:stream>`) and stops ``run()``; returns once it has stopped.
    public func close() async {
        closeRequested = true
        guard isRunning else { return }
        if let link, !link.finished {
            perform(link.machine.closeRequested(now: configuration.timeSource.now()), on: link)
        }
        await withCheckedContinuation { closeWaiters.append($0) }
    }

    /// Writes `stanza` after everything sent before it; it stays unacknowledged (and is resent on a resumption)
    /// until the server confirms it. Throws ``ClientError/notConnected`` when the link is not up.
    /// The `from` is left out: the server stamps the session's full JID (RFC 6120 §8.1.2.1), whatever resource it bound.
    public func send(_ stanza: Stanza) throws(ClientError) {
        guard let link, !link.finished else { throw .notConnected }
        perform(try link.machine.send(stanza.addressed(from: nil, to: stanza.to)), on: link)
    }

    /// The stanza `ticket` names now has a durable effect: it counts in our next ack once every stanza delivered
    /// before it does too. A ticket of an earlier connection changes nothing (that session's count is settled: what
    /// it did not count, a resumption delivers again).
    public func handled(_ ticket: InboundTicket) {
        inbound.markHandled(ticket)
        countHandledPrefix()
    }

    /// Returns once fewer of our stanzas than ``ClientConfiguration/sendWindow`` wait for the server's acknowledgement
    /// (the machine asks for one every few stanzas), or at once without XEP-0198 or without a link (the send then fails).
    package func awaitSendCapacity() async {
        while let link, !link.finished, link.machine.isConnected, unacknowledgedCount >= configuration.sendWindow {
            perform(link.machine.requestAcknowledgement(), on: link)   // whatever the machine's own rhythm of requests
            await withCheckedContinuation { capacityWaiters.append($0) }
        }
    }

    /// How many of our stanzas wait for the server's acknowledgement on the current link.
    package var unacknowledgedCount: Int {
        link?.machine.streamManagement?.unacknowledged.count ?? 0
    }

    /// Wakes the messages waiting for the send window: acknowledgements came, or the link ended.
    func wakeCapacityWaiters() {
        let waiters = capacityWaiters
        capacityWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    /// The oldest stanza delivered and not yet handled now has a durable effect (for a consumer that finishes the
    /// stanzas in the order they came).
    public func handled() {
        inbound.markOldestHandled()
        countHandledPrefix()
    }

    /// Counts the handled stanzas at the head of ``inbound`` in the stream's `h`.
    func countHandledPrefix() {
        guard let link, !link.finished else { return }
        let counted = inbound.takeHandledPrefix()
        guard counted > 0 else { return }
        for _ in 0..<counted { link.machine.handled() }
        keepResumption(link)
    }

    /// The account's JID with the resource it asks for: how requests name the asker, and what the stanzas addressed
    /// to whichever resource the server bound are addressed to when they reach the bridge.
    public nonisolated var accountJID: JID {
        JID(localpart: configuration.stream.username, domain: configuration.stream.domain, resource: configuration.stream.resource)!
    }

    /// Stops taking bytes from the server until ``resumeReading()`` (the bridge cannot record what it would get).
    /// Sending goes on.
    package func pauseReading() {
        readingPaused = true
    }

    /// Resumes reading after ``pauseReading()``; the keepalive clock restarts (the pause kept the server's bytes).
    package func resumeReading() {
        guard readingPaused else { return }
        readingPaused = false
        if let link, !link.finished { link.machine.bytesReceived(now: configuration.timeSource.now()) }
    }

    /// The TLS context (trust store) for every connection of this actor.
    func tlsContext() throws(NetworkError) -> TLSContext {
        if let madeTLSContext { return madeTLSContext }
        let context = try TLSContext(caFile: configuration.trustedCertificatesFile)
        madeTLSContext = context
        return context
    }

    private func sleepUnlessClosed(_ delay: Duration) async {
        let deadline = configuration.timeSource.now() + delay
        while !closeRequested, !Task.isCancelled, configuration.timeSource.now() < deadline {
            try? await Task.sleep(for: min(configuration.tickInterval, deadline - configuration.timeSource.now()))
        }
    }

}
