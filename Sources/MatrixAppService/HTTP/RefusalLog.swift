import IsthmusCommon
import Synchronization

/// Writes ``HTTPServer``'s refusals and dropped connections to the log, at most one line per (source address,
/// reason) per minute (``RefusalLogLimiter``), each with the number of refusals held back since the previous one.
/// Thread-safe (a lock guards the limiter); called on libmicrohttpd's thread and by the expiry sweep.
final class RefusalLog: Sendable {
    private let limiter: Mutex<RefusalLogLimiter>
    private let logger: Logger

    init(logger: Logger, interval: Duration = .seconds(60)) {
        self.logger = logger
        limiter = Mutex(RefusalLogLimiter(interval: interval))
    }

    /// A request from `address` was answered `status` without being served. Logs unless held back.
    func requestRefused(address: String, reason: String, status: Int) {
        guard let (key, suppressed) = record(address: address, reason: reason) else { return }
        logger.notice("Request refused", metadata: [
            "http.client.address": key.address, "http.refusal.reason": reason, "http.status": String(status),
            "http.refusals.suppressed": String(suppressed),
        ])
    }

    /// A connection from `address` was closed by the server's limits. Logs unless held back.
    func connectionDropped(address: String, reason: String) {
        guard let (key, suppressed) = record(address: address, reason: reason) else { return }
        logger.notice("Connection dropped", metadata: [
            "http.client.address": key.address, "http.refusal.reason": reason, "http.refusals.suppressed": String(suppressed),
        ])
    }

    private func record(address: String, reason: String) -> (RefusalLogLimiter.Key, Int)? {
        let now = ContinuousClock.now
        return limiter.withLock { $0.refused(.init(address: address, reason: reason), now: now) }
    }
}
