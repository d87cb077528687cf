import Dispatch
import IsthmusCommon
import Synchronization

/// Up to `size` ``PostgresConnection``s to one database, each handed to one caller at a time. Thread-safe.
///
/// ``checkOut(waitingAtMost:)`` hands out an idle connection that is still healthy (it first reads what the server
/// sent while it idled, so a terminated session is noticed), else opens a new one. A connection that comes back broken
/// is closed and replaced on the next check-out; the replacement prepares its statements again on first use (its
/// statement cache starts empty). After a failed connect, attempts wait a growing, bounded time
/// (``PostgresReconnectBackoff``), and check-outs in that wait fail at once with the last error.
/// The store's actor uses it from its one thread; a lease holder may keep one connection checked out for itself.
/// Check-out and connect block the calling thread (network I/O).
final class PostgresPool: Sendable {
    /// The libpq connection URI every connection uses.
    let url: String
    /// At most this many connections exist at once.
    let size: Int
    private let permits: DispatchSemaphore
    private let state: Mutex<State>
    private let now: @Sendable () -> ContinuousClock.Instant
    private let logger: Logger

    private struct State: ~Copyable {
        var idle: [Idle] = []
        var backoff: PostgresReconnectBackoff
        var lastConnectError: PostgresError?
    }

    /// A connection sitting in the pool: no thread uses it until one checks it out, under the lock.
    private struct Idle: @unchecked Sendable {
        let connection: PostgresConnection
    }

    /// A pool of at most `size` connections to `url`; connects lazily (the first check-out). No I/O.
    init(url: String, size: Int = 2, backoff: PostgresReconnectBackoff = PostgresReconnectBackoff(),
         now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }, logger: Logger = .disabled) {
        precondition(size > 0, "a pool needs at least one connection")
        self.url = url
        self.size = size
        permits = DispatchSemaphore(value: size)
        state = Mutex(State(backoff: backoff))
        self.now = now
        self.logger = logger
    }

    /// Closes the idle connections (the store closing before the process exits); a later check-out connects again.
    func closeIdle() {
        let closing = state.withLock { state in
            defer { state.idle.removeAll() }
            return state.idle
        }
        _ = closing  // released here, outside the lock: each connection's deinit ends its session (PQfinish)
    }

    /// Runs `body` with a connection of its own, returned to the pool afterwards (closed instead when it broke).
    /// Blocks while every connection is in use (at most `timeout`) and while connecting.
    func withConnection<T>(waitingAtMost timeout: Duration = .seconds(30),
                           _ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try checkOut(waitingAtMost: timeout)
        defer { checkIn(connection) }
        return try body(connection)
    }

    /// Takes a healthy connection out of the pool (opening one when none idles); the caller owns it until
    /// ``checkIn(_:)``. Throws the connect error (at once during the reconnect backoff), or a `53300`
    /// (too_many_connections) error when all `size` connections stay in use for `timeout`.
    func checkOut(waitingAtMost timeout: Duration = .seconds(30)) throws(PostgresError) -> PostgresConnection {
        let components = timeout.components
        let nanoseconds = max(0, Int(components.seconds) * 1_000_000_000 + Int(components.attoseconds / 1_000_000_000))
        guard permits.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .success else {
            throw PostgresError(sqlState: "53300", message: "all \(size) pooled PostgreSQL connections stayed in use "
                                + "for \(timeout)", sql: nil, isConnectionFailure: false)
        }
        do {
            while let idle = state.withLock({ $0.idle.popLast() }) {
                if idle.connection.pollConnection() { return idle.connection }
                logger.warning("Dropped a broken PostgreSQL connection", metadata: ["store.backend": "postgresql"])
            }
            return try connect()
        } catch {
            permits.signal()
            throw error
        }
    }

    /// Gives back a connection from ``checkOut(waitingAtMost:)``: kept for the next caller while healthy, closed when
    /// broken (the next check-out opens a replacement). A transaction left open is rolled back first (network I/O);
    /// a connection where that fails is closed. A connection must not be used after it is checked in.
    func checkIn(_ connection: PostgresConnection) {
        if connection.isInTransaction && !connection.isBroken {
            logger.warning("Rolled back a transaction left open on a pooled PostgreSQL connection",
                           metadata: ["store.backend": "postgresql"])
            try? connection.execute("ROLLBACK")
        }
        if !connection.isBroken && !connection.isInTransaction {
            let idle = Idle(connection: connection)
            state.withLock { $0.idle.append(idle) }
        }
        permits.signal()
    }

    /// How many connections sit idle in the pool (for tests and diagnostics).
    var idleCount: Int { state.withLock { $0.idle.count } }

    private func connect() throws(PostgresError) -> PostgresConnection {
        let start = now()
        let refusal: PostgresError? = state.withLock { state in
            guard !state.backoff.mayConnect(at: start), let last = state.lastConnectError else { return nil }
            var error = last
            error.message = "not retrying yet after: \(last.message)"
            return error
        }
        if let refusal { throw refusal }
        do {
            let connection = try PostgresConnection(url: url)
            let hadFailed = state.withLock { state in
                defer { state.backoff.connected(); state.lastConnectError = nil }
                return state.backoff.failures > 0
            }
            if hadFailed { logger.notice("Reconnected to PostgreSQL", metadata: ["store.backend": "postgresql"]) }
            return connection
        } catch {
            let failures = state.withLock { state in
                state.backoff.connectFailed(at: start)
                state.lastConnectError = error
                return state.backoff.failures
            }
            logger.warning("Cannot connect to PostgreSQL", metadata: [
                "store.backend": "postgresql", "store.error": error.message, "store.connect_failures": String(failures),
            ])
            throw error
        }
    }
}
