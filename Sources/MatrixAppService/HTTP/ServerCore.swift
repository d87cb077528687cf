import FoundationEssentials
import IsthmusCommon
import Glibc
import Synchronization

/// What ``HTTPServer`` and libmicrohttpd's callbacks share: admission of request heads, body limits, the
/// connection rules (``ConnectionPolicy``) and the requests waiting for their answer. All mutable state is behind
/// mutexes (never two held at once); the event methods run on libmicrohttpd's thread, the others on any thread.
final class ServerCore: Sendable {
    /// What to do with a request head.
    enum HeadOutcome {
        /// Queue this answer now; the body is never read and the connection closes after it.
        case answer(HTTPServerResponse)
        /// Read the body into this request.
        case readBody(PendingRequest)
        /// Abort the connection without an answer.
        case drop
    }

    /// What to do once a body has ended (or a suspended request was woken).
    enum EndOutcome {
        /// Queue this answer now.
        case answer(HTTPServerResponse)
        /// Nothing to queue yet: the request is with its consumer.
        case wait
    }

    private struct State {
        var accepting = true
        var closed = false
        var pending: [ObjectIdentifier: PendingRequest] = [:]
        /// Connections whose answer is queued — by its consumer, or 503 by ``close()`` — and not yet sent.
        var flushing: Set<ConnectionPolicy.ID> = []
    }

    /// How long ``close()`` lets libmicrohttpd's thread send the answers queued before the daemon stops.
    static let shutdownFlushLimit: Duration = .seconds(1)

    private struct Connections {
        var policy: ConnectionPolicy
        var open: [ConnectionPolicy.ID: MicroHTTPDConnection] = [:]
    }

    /// Feeds ``HTTPServer/requests``.
    let continuation: AsyncStream<HTTPServerRequest>.Continuation
    /// The running daemon, set once it started; taken (and stopped) by ``close()``.
    let daemon = Mutex<MicroHTTPDDaemon?>(nil)
    private let configuration: HTTPServer.Configuration
    private let logger: Logger
    private let refusals: RefusalLog
    private let state = Mutex(State())
    private let connections: Mutex<Connections>

    init(continuation: AsyncStream<HTTPServerRequest>.Continuation, configuration: HTTPServer.Configuration, logger: Logger) {
        self.continuation = continuation
        self.configuration = configuration
        self.logger = logger
        refusals = RefusalLog(logger: logger)
        connections = Mutex(Connections(policy: ConnectionPolicy(limits: configuration.connectionLimits)))
    }

    // MARK: Connections

    /// libmicrohttpd accepted `connection`: applies the limits, which may close another connection (or this one).
    func connectionOpened(_ connection: MicroHTTPDConnection) {
        let address = connection.remoteAddress
        let now = ContinuousClock.now
        let actions = connections.withLock { connections in
            connections.open[connection.id] = connection
            let open = connections.open
            let actions = connections.policy.opened(connection.id, address: address, now: now) { open[$0]?.hasUnreadInput ?? false }
            return perform(actions, in: &connections)
        }
        log(actions)
    }

    /// libmicrohttpd is about to close `connection`'s descriptor.
    func connectionClosed(_ connection: MicroHTTPDConnection) {
        connections.withLock { connections in
            connections.policy.closed(connection.id)
            connections.open[connection.id] = nil
        }
    }

    /// Closes unauthenticated connections idle (or sending their head) for longer than allowed. Any thread.
    func closeExpiredConnections() {
        let now = ContinuousClock.now
        let actions = connections.withLock { connections in
            perform(connections.policy.expire(now: now), in: &connections)
        }
        log(actions)
    }

    /// Shuts down the sockets of the connections to close, under the lock (so that none of them can have been
    /// closed and its descriptor reused meanwhile); returns the actions for logging.
    private func perform(_ actions: [ConnectionPolicy.Action], in connections: inout Connections) -> [ConnectionPolicy.Action] {
        for case .close(let id, _, _) in actions { connections.open[id]?.shutDown() }
        return actions
    }

    private func log(_ actions: [ConnectionPolicy.Action]) {
        for case .close(_, let address, let reason) in actions {
            refusals.connectionDropped(address: address, reason: reason.rawValue)
        }
    }

    private func requestStarted(on connection: MicroHTTPDConnection, authenticated: Bool) {
        let actions = connections.withLock { $0.policy.requestStarted(connection.id, authenticated: authenticated) }
        if actions.contains(.extendTimeout(connection.id)) { connection.setIdleTimeout(configuration.idleTimeout) }
    }

    // MARK: Requests (libmicrohttpd's thread)

    /// A request head arrived: admits or refuses it before any body byte is read.
    func headArrived(on connection: MicroHTTPDConnection, method: String, path: String) -> HeadOutcome {
        guard connections.withLock({ $0.policy.isOpen(connection.id) }) else { return .drop }
        let head = HTTPRequestHead(method: method, path: path, query: connection.query(), headers: connection.headers(),
                                   remoteAddress: connection.remoteAddress)
        let admission = configuration.admission?(head) ?? .admit(maxBodyBytes: configuration.maxBodyBytes, authenticated: true)
        switch admission {
        case .refuse(let response, let reason):
            requestStarted(on: connection, authenticated: false)
            refusals.requestRefused(address: head.remoteAddress, reason: reason, status: response.status)
            return .answer(response.closingConnection)
        case .admit(let maxBodyBytes, let authenticated):
            requestStarted(on: connection, authenticated: authenticated)
            let declared = head.headers["content-length"].flatMap { Int($0) }
            let chunked = head.headers["transfer-encoding"]?.lowercased().contains("chunked") ?? false
            if let declared, declared > maxBodyBytes {
                return .answer(refuseTooLarge(head))
            }
            if chunked, maxBodyBytes == 0 { return .answer(refuseTooLarge(head)) }
            return .readBody(PendingRequest(connection: connection, head: head, maxBodyBytes: maxBodyBytes,
                                            expectedBytes: declared ?? 0, startedAt: .now))
        }
    }

    /// Body bytes arrived. False aborts the connection (the request took longer than ``HTTPServer/Configuration/requestTimeout``).
    func bodyArrived(_ bytes: UnsafeRawBufferPointer, for request: PendingRequest) -> Bool {
        guard ContinuousClock.now - request.startedAt <= configuration.requestTimeout else {
            refusals.connectionDropped(address: request.head.remoteAddress, reason: "request_timeout")
            return false
        }
        request.append(bytes)
        return true
    }

    /// The body ended, or a suspended request was woken: refuses an oversized body, hands the request to its
    /// consumer (suspending the connection), or returns the answer to queue.
    func bodyEnded(_ request: PendingRequest) -> EndOutcome {
        let upload = request.takeUpload()
        if let response = upload.response { return .answer(response) }
        if upload.dispatched { return .wait }
        if upload.tooLarge { return .answer(refuseTooLarge(request.head)) }
        let head = request.head
        let incoming = HTTPServerRequest(method: head.method, path: head.path, query: head.query, headers: head.headers,
                                         body: Data(upload.body), responder: HTTPResponder(core: self, request: request))
        guard suspend(request) else { return .answer(.unavailable) }
        continuation.yield(incoming)
        return .wait
    }

    /// A request ended (answered or aborted); its connection is idle again.
    func requestEnded(on connection: MicroHTTPDConnection) {
        let now = ContinuousClock.now
        connections.withLock { $0.policy.requestFinished(connection.id, now: now) }
        state.withLock { _ = $0.flushing.remove(connection.id) }
    }

    private func refuseTooLarge(_ head: HTTPRequestHead) -> HTTPServerResponse {
        refusals.requestRefused(address: head.remoteAddress, reason: "body_too_large", status: configuration.tooLargeResponse.status)
        return configuration.tooLargeResponse.closingConnection
    }

    // MARK: Answers and shutdown (any thread)

    /// Ends ``HTTPServer/requests``; requests completing from now on are answered 503 at once. Idempotent.
    func stopAccepting() {
        state.withLock { $0.accepting = false }
        continuation.finish()
    }

    /// Answers every waiting request with 503 and stops the daemon. Idempotent.
    func close() {
        stopAccepting()
        let unanswered: Int = state.withLock { state in
            guard !state.closed else { return 0 }
            state.closed = true
            let all = Array(state.pending.values)
            state.pending = [:]
            for request in all { request.resume(with: .unavailable) }  // under the lock: before the daemon stops
            state.flushing.formUnion(all.map(\.connection.id))
            return all.count
        }
        if unanswered > 0 {
            logger.notice("Answered unfinished requests with 503 at shutdown", metadata: ["http.requests": String(unanswered)])
        }
        awaitFlushed()
        if let daemon = daemon.withLock({ handle in defer { handle = nil }; return handle }) {
            daemon.stop()
        }
    }

    /// Waits (blocking, at most ``shutdownFlushLimit``) until libmicrohttpd's thread has sent the answers queued — the
    /// 503s ``close()`` gave, and answers given just before: stopping the daemon at once closed those connections
    /// before their resumed answer went out, and the homeserver saw a dropped connection instead of "retry later" (the
    /// browser ending `login --sso`, no page). A poll: libmicrohttpd offers no wait for this.
    private func awaitFlushed() {
        let deadline = ContinuousClock.now + Self.shutdownFlushLimit
        while state.withLock({ !$0.flushing.isEmpty }), ContinuousClock.now < deadline {
            usleep(2_000)
        }
    }

    /// How many requests wait for their answer (handed to the consumer, connection suspended). For tests.
    var waitingRequests: Int { state.withLock { $0.pending.count } }

    /// Registers `request` as waiting for its answer and suspends its connection; false when the server no longer
    /// accepts requests.
    private func suspend(_ request: PendingRequest) -> Bool {
        state.withLock { state in
            guard state.accepting, !state.closed else { return false }
            request.connection.suspend()
            state.pending[ObjectIdentifier(request)] = request
            return true
        }
    }

    /// Stores the answer and resumes the connection, unless it was already answered (or the server closed).
    func answer(_ request: PendingRequest, with response: HTTPServerResponse) {
        state.withLock { state in
            guard state.pending.removeValue(forKey: ObjectIdentifier(request)) != nil else { return }
            request.resume(with: response)
            state.flushing.insert(request.connection.id)
        }
    }
}
