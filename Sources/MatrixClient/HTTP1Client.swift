import Foundation
import Network
import Synchronization

/// HTTP/1.1 to one host over TCP, or TLS (OpenSSL, see ``Network/TLSStream``), with a pool of keep-alive connections:
/// what ``MatrixClient`` uses for an `http://` or `https://` homeserver.
///
/// Why not URLSession: on Linux (swift-corelibs-foundation on libcurl) a request costs ~250 µs of CPU across several
/// threads and leaks ~200 bytes (a `CURLU` handle per request in `CFURLSessionCurlHostIsEqual`): ~170 MB a day for
/// a bridge sending ten messages a second. Here a request is one write and a few reads on a connection from the pool.
///
/// At most `maxConnections` requests are in flight; more wait for a connection. A request that fails on a reused
/// connection before any byte of the answer arrived (the server closed the idle connection) is sent again once on a
/// new connection. Thread-safe; every call does network I/O.
final class HTTP1Client: Sendable {
    /// One answer.
    struct Response: Sendable {
        var status: Int
        /// Header names lowercased.
        var headers: [String: String]
        var body: Data
    }

    /// Why there is no answer.
    enum Failure: Error, Sendable, CustomStringConvertible {
        /// Nothing listens at the address (or it cannot be resolved).
        case connectionRefused(String)
        /// No complete answer within the timeout.
        case timedOut
        /// The connection broke or the answer was not HTTP.
        case failed(String)
        /// No request can be made (the homeserver URL is unusable, TLS cannot be set up).
        case unusable(String)

        var description: String {
            switch self {
            case .connectionRefused(let reason): "cannot connect: \(reason)"
            case .timedOut: "timed out"
            case .failed(let reason), .unusable(let reason): reason
            }
        }
    }

    let host: String
    let port: Int
    /// Set for `https://`: connections speak TLS, checked against this trust.
    private let tls: TLSContext?
    private let hostHeader: String
    private let pool: ConnectionPool
    private let deadlines: Deadlines
    private let sweeper: Sweeper

    /// How often request deadlines are checked (a timeout fires up to this much late).
    static let sweepInterval = Duration.milliseconds(100)

    init(host: String, port: Int, maxConnections: Int, tls: TLSContext? = nil) {
        self.host = host
        self.port = port
        self.tls = tls
        hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        pool = ConnectionPool(limit: max(1, maxConnections))
        // One timer for every request's deadline. Not a sleeping task per request: on Linux a cancelled Task.sleep
        // keeps its timer (and memory) until the original deadline — 30 s × thousands of requests a second.
        let deadlines = Deadlines()
        self.deadlines = deadlines
        sweeper = Sweeper(every: Self.sweepInterval) { deadlines.expire(now: .now) }
    }

    deinit {
        sweeper.cancel()
        pool.closeAll()
    }

    /// A repeating Dispatch timer (thread-safe: Dispatch sources may be cancelled from any thread).
    final class Sweeper: @unchecked Sendable {
        private let timer: any DispatchSourceTimer

        init(every interval: Duration, _ handler: @escaping @Sendable () -> Void) {
            timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "isthmus.http1.deadlines"))
            let milliseconds = Int(interval.components.seconds * 1000 + interval.components.attoseconds / 1_000_000_000_000_000)
            timer.schedule(deadline: .now() + .milliseconds(milliseconds), repeating: .milliseconds(milliseconds), leeway: .milliseconds(10))
            timer.setEventHandler(handler: handler)
            timer.resume()
        }

        func cancel() { timer.cancel() }
    }

    /// Sends one request (`target` is the path and query, already encoded) and returns the answer, within `timeout`.
    func send(method: String, target: String, headers: [(String, String)], body: Data?, timeout: Duration) async throws(Failure) -> Response {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body?.count ?? 0)\r\n\r\n"
        var bytes = Array(head.utf8)
        if let body { bytes.append(contentsOf: body) }
        let deadline = ContinuousClock.now + timeout

        await pool.acquireSlot()
        var connection = pool.takeIdle()
        var reused = connection != nil
        defer { pool.releaseSlot() }
        while true {
            if connection == nil {
                do {
                    connection = try await Connection.open(host: host, port: port, timeout: min(timeout, .seconds(10)), tls: tls,
                                                           deadline: deadline, deadlines: deadlines)
                } catch let error as NetworkError {
                    throw Self.failure(error)
                } catch {
                    throw .failed("\(error)")
                }
            }
            let current = connection!
            let outcome = await current.exchange(bytes, method: method, deadline: deadline, deadlines: deadlines)
            switch outcome {
            case .answered(let response, let reusable):
                if reusable { pool.putIdle(current) } else { current.close() }
                return Response(status: response.status, headers: response.headers, body: Data(response.body))
            case .failedBeforeAnswer(let reason) where reused:
                // The server had closed the idle connection: once more, on a new one.
                _ = reason
                current.close()
                connection = nil
                reused = false
            case .failedBeforeAnswer(let reason), .failed(let reason):
                current.close()
                throw .failed(reason)
            case .timedOut:
                current.close()
                throw .timedOut
            }
        }
    }

    private static func failure(_ error: NetworkError) -> Failure {
        switch error {
        case .connectionRefused, .resolutionFailed: .connectionRefused(error.description)
        case .connectTimedOut: .timedOut
        default: .failed(error.description)
        }
    }

    /// One keep-alive connection. Used by one request at a time (the pool hands it out exclusively), which is what
    /// makes the unsynchronised iterator safe.
    final class Connection: @unchecked Sendable {
        enum Outcome {
            case answered(HTTP1ResponseDecoder.Response, reusable: Bool)
            /// Nothing of an answer arrived (write failed, or closed/reset at once).
            case failedBeforeAnswer(String)
            case failed(String)
            case timedOut
        }

        private let socket: TCPConnection
        /// Plain HTTP reads the socket's chunks; HTTPS reads decrypted ones from `tls`.
        private var inbound: TCPInbound.AsyncIterator?
        private let tls: TLSStream?

        private init(socket: TCPConnection, tls: TLSStream?) {
            self.socket = socket
            self.tls = tls
            inbound = tls == nil ? socket.inbound.makeAsyncIterator() : nil
        }

        /// Connects (and for `tls`, runs the handshake: aborted by `deadlines` at `deadline` like a request).
        static func open(host: String, port: Int, timeout: Duration, tls: TLSContext?, deadline: ContinuousClock.Instant,
                         deadlines: Deadlines) async throws -> Connection {
            let socket = try await TCPConnection.connect(host: host, port: port, timeout: timeout)
            guard let tls else { return Connection(socket: socket, tls: nil) }
            let watch = Deadlines.Watch(socket: socket, deadline: deadline)
            deadlines.add(watch)
            defer { deadlines.remove(watch) }
            do {
                return Connection(socket: socket, tls: try await TLSStream.connect(over: socket, host: host, context: tls))
            } catch {
                socket.abort()
                if watch.expired.load(ordering: .relaxed) { throw NetworkError.connectTimedOut(host: host, port: port) }
                throw error
            }
        }

        func close() { socket.abort() }

        private func write(_ bytes: [UInt8]) throws {
            if let tls { try tls.write(bytes) } else { try socket.write(bytes) }
        }

        private func nextChunk() async throws -> [UInt8]? {
            if let tls { return try await tls.next() }
            return try await inbound?.next()
        }

        /// Writes the request and reads one answer; past `deadline` the socket is aborted (by `deadlines`' sweep) and
        /// the outcome is a timeout.
        func exchange(_ request: [UInt8], method: String, deadline: ContinuousClock.Instant, deadlines: Deadlines) async -> Outcome {
            do {
                try write(request)
            } catch {
                return .failedBeforeAnswer("\(error)")
            }
            let watch = Deadlines.Watch(socket: socket, deadline: deadline)
            deadlines.add(watch)
            defer { deadlines.remove(watch) }
            var decoder = HTTP1ResponseDecoder(method: method)
            var received = false
            do {
                while true {
                    if let response = try decoder.next() {
                        // Reuse only a connection that holds nothing beyond this answer, and that the deadline sweep will not
                        // abort any more (claiming the flag first keeps it from firing now).
                        let claimed = watch.expired.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged
                        let reusable = claimed && response.keepAlive && decoder.unconsumedBytes == 0
                        return .answered(response, reusable: reusable)
                    }
                    guard let chunk = try await nextChunk() else {
                        if watch.expired.load(ordering: .relaxed) { return .timedOut }
                        if let response = try decoder.finish() { return .answered(response, reusable: false) }
                        return received ? .failed("connection closed before the answer was complete")
                            : .failedBeforeAnswer("connection closed before an answer")
                    }
                    received = true
                    decoder.feed(chunk)
                }
            } catch let error as HTTP1ResponseDecoder.DecodeError {
                return .failed(error.description)
            } catch {
                if watch.expired.load(ordering: .relaxed) { return .timedOut }
                return received ? .failed("\(error)") : .failedBeforeAnswer("\(error)")
            }
        }
    }

    /// The deadlines of requests in flight, checked by one timer: an expired request's socket is aborted.
    final class Deadlines: Sendable {
        final class Watch: Sendable {
            let socket: TCPConnection
            let deadline: ContinuousClock.Instant
            /// Set by whoever gets there first: the sweep (timed out) or the exchange (answered; not to be aborted).
            let expired = Atomic<Bool>(false)

            init(socket: TCPConnection, deadline: ContinuousClock.Instant) {
                self.socket = socket
                self.deadline = deadline
            }
        }

        private let watches = Mutex<[ObjectIdentifier: Watch]>([:])

        func add(_ watch: Watch) { watches.withLock { $0[ObjectIdentifier(watch)] = watch } }

        func remove(_ watch: Watch) { _ = watches.withLock { $0.removeValue(forKey: ObjectIdentifier(watch)) } }

        func expire(now: ContinuousClock.Instant) {
            let due = watches.withLock { $0.values.filter { $0.deadline <= now } }
            for watch in due where watch.expired.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
                watch.socket.abort()
            }
        }
    }

    /// Idle connections, and a bound on requests in flight.
    final class ConnectionPool: Sendable {
        private struct State {
            var idle: [Connection] = []
            var inFlight = 0
            var waiters: [CheckedContinuation<Void, Never>] = []
        }

        private let limit: Int
        private let state = Mutex(State())

        init(limit: Int) { self.limit = limit }

        /// Waits until fewer than `limit` requests are in flight and takes a place.
        func acquireSlot() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                state.withLock { state in
                    if state.inFlight < limit {
                        state.inFlight += 1
                        continuation.resume()
                    } else {
                        state.waiters.append(continuation)
                    }
                }
            }
        }

        /// Gives the place back (to the longest waiter, if any).
        func releaseSlot() {
            state.withLock { state in
                if state.waiters.isEmpty {
                    state.inFlight -= 1
                } else {
                    state.waiters.removeFirst().resume()
                }
            }
        }

        func takeIdle() -> Connection? { state.withLock { $0.idle.popLast() } }

        func putIdle(_ connection: Connection) {
            let excess: Connection? = state.withLock { state in
                guard state.idle.count < limit else { return connection }
                state.idle.append(connection)
                return nil
            }
            excess?.close()
        }

        func closeAll() {
            let idle = state.withLock { state in
                defer { state.idle = [] }
                return state.idle
            }
            for connection in idle { connection.close() }
        }
    }
}
