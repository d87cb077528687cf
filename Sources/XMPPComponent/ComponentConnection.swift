import IsthmusCommon
import Network
import XMLStream

/// The XEP-0114 component connection: one actor owning the TCP link to the XMPP server.
///
/// ``run()`` connects, handshakes, keeps the link alive (XEP-0199 pings after silence), notices a dead link and
/// reconnects with exponential backoff and jitter — until the calling task is cancelled or ``close()`` is called.
/// Everything the server sends that is not the answer to one of our own requests comes out of ``events`` in
/// arrival order, for one consumer. ``send(_:)`` writes in call order; MUC and MAM operations live in extensions.
///
/// The stream's protocol decisions (handshake, keepalive, stream errors, what may be sent) are
/// ``ComponentStateMachine``'s; this actor performs its actions (I/O, events, logs). The request logic in the
/// extensions — matching answers to their waiters, MUC joins and leaves, MAM paging, configuring a room a join
/// created — is the actor's own. Does I/O; every method runs on the actor.
public actor ComponentConnection {
    /// Where to connect and the timers (immutable).
    public nonisolated let configuration: ComponentConfiguration
    /// Connection changes and stanzas, in order. Finishes when ``run()`` returns.
    public nonisolated let events: AsyncStream<ComponentEvent>
    let eventSink: AsyncStream<ComponentEvent>.Continuation
    let logger: Logger

    var link: ComponentLink?
    var linkCount = 0
    var isRunning = false
    var closeRequested = false
    var closeWaiters: [CheckedContinuation<Void, Never>] = []
    package let iqWaiters = ResponseWaiters<StanzaAttributeID, JID?, IQ>()
    package let presenceWaiters = ResponseWaiters<OccupantKey, OccupantPresenceMatcher, OccupantPresenceMatcher.Match>()
    package var mamCollectors: [String: MAMCollector] = [:]
    /// Set by ``pauseReading()``: the read loop takes no more bytes from the socket (its back-pressure then stops
    /// the kernel's buffer, and the server's, from draining) and the keepalive timers stand still.
    var readingPaused = false

    /// A connection that does nothing until ``run()``. `logger` is used as given (add metadata before passing it).
    public init(configuration: ComponentConfiguration, logger: Logger) {
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "xmpp.component.domain"] = configuration.componentDomain
        self.logger = logger
        (events, eventSink) = AsyncStream<ComponentEvent>.makeStream()
    }

    /// Stops taking bytes from the server until ``resumeReading()`` (the bridge's consumer cannot record what it
    /// would get). Sending goes on. Runs on the actor; no I/O.
    package func pauseReading() {
        readingPaused = true
    }

    /// Resumes reading after ``pauseReading()``. The keepalive clock restarts: the pause, not the server, kept its
    /// bytes from us. Runs on the actor; no I/O.
    package func resumeReading() {
        guard readingPaused else { return }
        readingPaused = false
        if let link, !link.finished { link.machine.bytesReceived(now: configuration.timeSource.now()) }
    }

    /// The component has no stream management to pace by: the server reads what it can, TCP holds the rest.
    package func awaitSendCapacity() async {}

    /// Whether the handshake has completed and stanzas can be sent now.
    public var isConnected: Bool {
        guard let link, !link.finished else { return false }
        return link.machine.isConnected
    }

    /// Connects and stays connected, reconnecting after every drop (backoff from
    /// ``ComponentConfiguration/reconnectInitialDelay`` doubling up to ``ComponentConfiguration/reconnectMaximumDelay``,
    /// with jitter), until the task is cancelled (the link is then dropped at once) or ``close()`` is called (the
    /// stream is closed gracefully). Returning means stopped; ``events`` then finishes. Call once.
    public func run() async {
        guard !isRunning else { return }
        guard !closeRequested else {
            eventSink.finish()
            return
        }
        isRunning = true
        defer {
            isRunning = false
            eventSink.finish()
            for waiter in closeWaiters { waiter.resume() }
            closeWaiters = []
        }
        var backoff = ReconnectBackoff(
            initial: configuration.reconnectInitialDelay, maximum: configuration.reconnectMaximumDelay)
        var random = SystemRandomNumberGenerator()
        var everConnected = false
        while !Task.isCancelled, !closeRequested {
            let (established, error) = await runLink(reconnected: everConnected)
            if established {
                everConnected = true
                backoff.reset()
            }
            guard let error, !Task.isCancelled, !closeRequested else { break }
            eventSink.yield(.disconnected(error))
            let delay = backoff.nextDelay(using: &random)
            logger.log(
                Self.isConfigurationProblem(error) ? .error : .notice, "Will reconnect to the XMPP server",
                metadata: ["xmpp.error": error.description, "xmpp.reconnect.delay": "\(delay)",
                           "xmpp.reconnect.attempt": String(backoff.attempt)])
            await sleepUnlessClosed(delay)
        }
    }

    /// Closes the stream gracefully (`</stream:stream>`, waiting briefly for the server's) and stops ``run()``;
    /// returns once it has stopped. Pending requests fail with ``ComponentError/notConnected``.
    public func close() async {
        closeRequested = true
        guard isRunning else { return }
        if let link, !link.finished {
            perform(link.machine.closeRequested(now: configuration.timeSource.now()), on: link)
        }
        await withCheckedContinuation { closeWaiters.append($0) }
    }

    /// Errors a reconnect will not fix by itself: logged as errors.
    static func isConfigurationProblem(_ error: ComponentError) -> Bool {
        switch error {
        case .notAuthorized, .hostUnknown, .connectionRefused, .invalidFrom: true
        default: false
        }
    }

    /// Waits `delay`, or less if ``close()`` is called or the task is cancelled meanwhile.
    private func sleepUnlessClosed(_ delay: Duration) async {
        let deadline = configuration.timeSource.now() + delay
        while !closeRequested, !Task.isCancelled, configuration.timeSource.now() < deadline {
            try? await Task.sleep(for: min(configuration.tickInterval, deadline - configuration.timeSource.now()))
        }
    }
}
