import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A response body produced while it is sent (media streamed from the homeserver): a bounded buffer between a
/// producer thread that may block and libmicrohttpd's thread, which must never block. Thread-safe.
///
/// Backpressure: ``write(_:stallTimeout:)`` blocks while the buffer holds ``capacity`` bytes, so at most that much of
/// a transfer is in memory; a client that reads nothing for `stallTimeout` ends the transfer (a slow client cannot
/// hold it forever). On the other side, when the buffer is empty the connection is suspended (libmicrohttpd allows
/// `MHD_suspend_connection` from a content reader) and resumed by the next write; suspended connections do not
/// time out in libmicrohttpd, so the producer's own stall timeouts bound that wait.
///
/// A pthread mutex and condition rather than `Synchronization.Mutex`: the producer must sleep until there is room.
///
/// The producer wakes the connection outside the lock (libmicrohttpd's resume takes its own mutex, which its thread
/// may hold when it releases the response and calls ``abandon()``). A suspended connection is never closed by the
/// library, so the wake-up cannot reach a freed connection — except when the daemon stops (shutdown), which closes
/// suspended connections too. That window (a transfer waking its connection while the daemon stops it) is left open:
/// it exists only at shutdown.
public final class HTTPStreamingBody: @unchecked Sendable, Equatable {
    /// The body's length when known (sent as `Content-Length`); nil: chunked.
    public let length: Int64?
    /// Bytes buffered at most.
    public let capacity: Int
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let roomAvailable = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Guarded by `lock`:
    private var buffer: [UInt8] = []
    private var start = 0
    private var finished = false
    private var failed = false
    private var consumerGone = false
    private var resume: (@Sendable () -> Void)?

    public init(length: Int64?, capacity: Int = 256 << 10) {
        self.length = length
        self.capacity = max(4096, capacity)
        pthread_mutex_init(lock, nil)
        pthread_cond_init(roomAvailable, nil)
    }

    deinit {
        pthread_cond_destroy(roomAvailable)
        pthread_mutex_destroy(lock)
        lock.deallocate()
        roomAvailable.deallocate()
    }

    public static func == (lhs: HTTPStreamingBody, rhs: HTTPStreamingBody) -> Bool { lhs === rhs }

    // MARK: Producer (any thread; blocks)

    /// Appends `bytes`, waiting while the buffer is full. False: the client is gone, or read nothing for `stallTimeout`
    /// (the producer should stop).
    public func write(_ bytes: UnsafeRawBufferPointer, stallTimeout: Duration) -> Bool {
        var offset = 0
        while offset < bytes.count {
            var wake: (@Sendable () -> Void)?
            pthread_mutex_lock(lock)
            var deadline = Self.deadline(after: stallTimeout)
            while !consumerGone, buffer.count - start >= capacity {
                if pthread_cond_timedwait(roomAvailable, lock, &deadline) == ETIMEDOUT { break }
            }
            guard !consumerGone, buffer.count - start < capacity else {
                pthread_mutex_unlock(lock)
                return false
            }
            if start > 0, start >= buffer.count / 2 { buffer.removeFirst(start); start = 0 }
            let take = min(capacity - (buffer.count - start), bytes.count - offset)
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + take)]))
            offset += take
            swap(&wake, &resume)
            pthread_mutex_unlock(lock)
            wake?()
        }
        return true
    }

    /// Ends the body: normally, or (`failed`) by closing the connection before the declared length was sent.
    public func finish(failed: Bool = false) {
        var wake: (@Sendable () -> Void)?
        pthread_mutex_lock(lock)
        finished = true
        self.failed = self.failed || failed
        swap(&wake, &resume)
        pthread_mutex_unlock(lock)
        wake?()
    }

    /// Whether the client went away (the producer may stop early).
    public var isAbandoned: Bool {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return consumerGone
    }

    // MARK: Consumer (libmicrohttpd's thread)

    enum ReadOutcome: Equatable {
        case bytes(Int)
        /// Nothing buffered yet: the caller suspended the connection; `resume` wakes it.
        case wait
        case end
        case failed
    }

    /// Copies buffered bytes into `destination`. When there are none, calls `suspend` and keeps `resume` for the next
    /// write (the suspension happens after the lock is released; a resume that comes first cancels it, which
    /// libmicrohttpd handles: `internal_suspend_connection_` checks `resuming`).
    func read(into destination: UnsafeMutableRawBufferPointer, resume: @escaping @Sendable () -> Void) -> ReadOutcome {
        pthread_mutex_lock(lock)
        let available = buffer.count - start
        if available > 0 {
            let count = min(available, destination.count)
            buffer.withUnsafeBytes { source in
                destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<(start + count)]))
            }
            start += count
            if start == buffer.count { buffer.removeAll(keepingCapacity: true); start = 0 }
            pthread_cond_signal(roomAvailable)
            pthread_mutex_unlock(lock)
            return .bytes(count)
        }
        if finished {
            let outcome: ReadOutcome = failed ? .failed : .end
            pthread_mutex_unlock(lock)
            return outcome
        }
        self.resume = resume
        pthread_mutex_unlock(lock)
        return .wait
    }

    /// The response was released (sent, or the client went away): the producer's next write fails.
    func abandon() {
        pthread_mutex_lock(lock)
        consumerGone = true
        resume = nil
        buffer = []
        start = 0
        pthread_cond_broadcast(roomAvailable)
        pthread_mutex_unlock(lock)
    }

    private static func deadline(after duration: Duration) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let (seconds, attoseconds) = duration.components
        var nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var wholeSeconds = Int(now.tv_sec) + Int(seconds)
        if nanoseconds >= 1_000_000_000 { nanoseconds -= 1_000_000_000; wholeSeconds += 1 }
        return timespec(tv_sec: wholeSeconds, tv_nsec: nanoseconds)
    }
}
