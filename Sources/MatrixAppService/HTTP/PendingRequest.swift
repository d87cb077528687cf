import Synchronization

/// One admitted request on one connection (libmicrohttpd's `con_cls`), from its head to its completion: the body
/// read so far (never more than its limit: past it the bytes are counted and dropped) and, once answered, the
/// answer to queue. Thread-safe (a lock guards the upload).
final class PendingRequest: Sendable {
    /// The mutable part.
    struct Upload {
        /// The body so far (emptied once it passed the limit, and once handed over).
        var body: [UInt8] = []
        /// Whether the body passed its limit.
        var tooLarge = false
        /// Whether the request was handed to its consumer (or refused) at the end of its body.
        var dispatched = false
        /// The answer, once given (queued when the connection wakes).
        var response: HTTPServerResponse?
    }

    /// The connection the request arrived on.
    let connection: MicroHTTPDConnection
    /// What the admission saw.
    let head: HTTPRequestHead
    /// The limit the admission set.
    let maxBodyBytes: Int
    /// When the head arrived (for the total request timeout).
    let startedAt: ContinuousClock.Instant
    private let upload: Mutex<Upload>

    /// `expectedBytes` (a declared `Content-Length` within the limit) is reserved up front.
    init(connection: MicroHTTPDConnection, head: HTTPRequestHead, maxBodyBytes: Int, expectedBytes: Int, startedAt: ContinuousClock.Instant) {
        self.connection = connection
        self.head = head
        self.maxBodyBytes = maxBodyBytes
        self.startedAt = startedAt
        var initial = Upload()
        initial.body.reserveCapacity(min(expectedBytes, maxBodyBytes))
        upload = Mutex(initial)
    }

    /// Appends body bytes, or drops the whole body once it passes the limit.
    func append(_ bytes: UnsafeRawBufferPointer) {
        upload.withLock { upload in
            guard !upload.tooLarge else { return }
            if upload.body.count + bytes.count > maxBodyBytes {
                upload.tooLarge = true
                upload.body = []
            } else {
                upload.body.append(contentsOf: bytes)
            }
        }
    }

    /// The upload as it stands; marks the request dispatched and releases the body.
    func takeUpload() -> Upload {
        upload.withLock { upload in
            defer { upload.dispatched = true; upload.body = [] }
            return upload
        }
    }

    /// Sets the answer and wakes the connection. Call only under ``ServerCore``'s request lock.
    func resume(with response: HTTPServerResponse) {
        upload.withLock { $0.response = response }
        connection.resume()
    }
}
