import FoundationEssentials
import IsthmusCommon
import Matrix
import MatrixAppService
import MatrixCrypto
import Media
import Synchronization

/// The media route of the appservice listener: a signed link (``MediaLinkSigner``) → the file, streamed from the
/// homeserver's authenticated media (`GET /_matrix/client/v1/media/download/{server}/{id}`, spec v1.11 §10.7.3, with
/// the appservice token) to the XMPP client as it arrives, never held whole in memory (see ``HTTPStreamingBody``).
///
/// Answers: a wrong signature or malformed link → 404 (the same as unknown media: nothing to probe); the homeserver's
/// 404 → 404; its other failures → 502; too many transfers at once → 503. Otherwise 200 with the homeserver's
/// `Content-Type` and `Content-Length`, a `Content-Disposition` built from the sanitized name (inline only for images,
/// audio and video), an `ETag` (the signature: a Matrix file never changes), and a single `Range` served as 206
/// (the homeserver's bytes before the range are read and dropped). Runs on any task; each transfer on its own thread.
///
/// An encrypted file's link carries its secrets (``AttachmentKeys``): it is decrypted as it streams, typed by its
/// name, served whole (a `Range` is ignored, as HTTP allows: the hash covers the whole file), and its last piece is
/// held back until the hash of the ciphertext matches — a file the homeserver altered ends as a failed transfer.
public struct MediaProxy: MediaRequestHandler {
    let settings: MediaSettings
    let slots: TransferSlots
    let logger: Logger
    /// Refused links are logged at most once a minute, with how many were held back (a scanner must not flood the log).
    let refusals = RefusedLinkLog()
    /// Requests refused for want of a free transfer, logged likewise.
    let busy = RefusedLinkLog()

    public init(settings: MediaSettings, logger: Logger) {
        self.settings = settings
        slots = TransferSlots(limit: settings.maxConcurrentTransfers)
        self.logger = logger
    }

    public func serveMedia(id: String, signature: String, fileName: String, method: String,
                           headers: [String: String]) async -> HTTPServerResponse {
        guard let link = settings.signer?.verifiedLink(id: id, signature: signature, fileName: fileName),
              link.secret.map({ AttachmentKeys(linkSecret: $0) != nil }) ?? true else {
            if let suppressed = refusals.refused(now: .now) {
                logger.notice("Media link refused: wrong signature or malformed", metadata: ["http.refusals.suppressed": "\(suppressed)"])
            }
            return Self.notFound
        }
        let (reference, name, keys) = (link.reference, link.fileName, link.secret.flatMap(AttachmentKeys.init(linkSecret:)))
        let etag = "\"\(signature)\""
        if let match = headers["if-none-match"], match.split(separator: ",").contains(where: { $0.trimmingWhitespace() == etag || $0.trimmingWhitespace() == "*" }) {
            return HTTPServerResponse(status: 304, headers: ["ETag": etag])
        }
        guard let credential = await settings.authorization() else {
            return HTTPServerResponse(status: 503, headers: ["Retry-After": "30", "Content-Type": "text/plain"], body: Data("Unavailable\n".utf8))
        }
        guard slots.tryAcquire() else {
            if let suppressed = busy.refused(now: .now) {
                logger.notice("Media request refused: too many transfers", metadata: [
                    "media.transfers.limit": "\(settings.maxConcurrentTransfers)", "http.refusals.suppressed": "\(suppressed)"])
            }
            return HTTPServerResponse(status: 503, headers: ["Retry-After": "5", "Content-Type": "text/plain"], body: Data("Busy\n".utf8))
        }
        var request = CurlEasyTransfer.Request(url: "\(settings.homeserverBase)/_matrix/client/v1/media/download/"
                                                 + "\(PercentEncoding.encode(reference.server))/\(reference.mediaID)")
        request.headers = [credential.header]
        request.caFile = settings.caFile
        request.stallTimeout = settings.stallTimeout
        request.totalTimeout = .seconds(24 * 3600)  // a large file to a slow (but moving) client; stalls end it sooner
        let range = keys == nil ? headers["range"] : nil
        let upstream = request
        let stallTimeout = settings.stallTimeout
        let slots = slots, logger = logger
        return await withCheckedContinuation { (continuation: CheckedContinuation<HTTPServerResponse, Never>) in
            let answer = OnceAnswer(continuation)
            do {
                try DedicatedThread.start(name: "isthmus-media") {
                    defer { slots.release() }
                    let stream = MediaStreamState(keys: keys, stallTimeout: stallTimeout)
                    let result = CurlEasyTransfer.perform(upstream, onHead: { head in
                        let response = Self.response(to: head, name: name, etag: etag, range: range, stream: stream)
                        answer.give(response)
                        return response.stream != nil
                    }, onData: { chunk in
                        stream.forward(chunk, stallTimeout: stallTimeout)
                    })
                    switch result {
                    case .success:
                        stream.finish(failed: stream.remaining > 0 && stream.remaining != .max, logger: logger)
                    case .failure(.aborted) where stream.remaining == 0:
                        stream.finish(failed: false, logger: logger)
                    case .failure(.aborted) where stream.body == nil:
                        break  // the head was answered (an error status)
                    case .failure(let failure):
                        if stream.body != nil {
                            logger.info("Media transfer to an XMPP client ended early", metadata: ["media.error": failure.description])
                        } else {
                            logger.warning("Media download from the homeserver failed", metadata: ["media.error": failure.description])
                        }
                        stream.body?.finish(failed: true)
                        answer.give(HTTPServerResponse(status: 502, headers: ["Content-Type": "text/plain"], body: Data("Bad gateway\n".utf8)))
                    }
                }
            } catch {
                slots.release()
                answer.give(HTTPServerResponse(status: 503, headers: ["Retry-After": "5"]))
            }
        }
    }

    /// The answer to the homeserver's response head: an error, a 416, or a streamed 200/206 (whose body `stream` gets).
    static func response(to head: CurlEasyTransfer.Head, name: String, etag: String, range: String?, stream: MediaStreamState) -> HTTPServerResponse {
        guard head.status == 200 else {
            return head.status == 404 ? notFound
                : HTTPServerResponse(status: 502, headers: ["Content-Type": "text/plain"], body: Data("Bad gateway\n".utf8))
        }
        // An encrypted file is octet-stream at the homeserver: what it is, its name says (its extension is the
        // event's media type when the sender gave it none, see ``MatrixAttachment/name(body:)``).
        let contentType = stream.encrypted ? MediaKind.mediaType(forFileName: name) ?? "application/octet-stream"
            : head.headers["content-type"].flatMap { $0.isEmpty ? nil : $0 } ?? "application/octet-stream"
        let kind = MediaKind(mediaType: contentType)
        var headers = [
            "Content-Type": contentType,
            "Content-Disposition": "\(kind == .file ? "attachment" : "inline"); filename=\"\(name)\"",
            "ETag": etag,
            "Accept-Ranges": stream.encrypted ? "none" : "bytes",
            "Cache-Control": "private, max-age=86400",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox; default-src 'none'",
        ]
        let length = head.headers["content-length"].flatMap { Int64($0) }
        var status = 200
        switch length.map({ ByteRange.parse(range, length: $0) }) ?? .whole {
        case .whole:
            stream.start(length: length, skip: 0, count: length ?? .max)
        case .part(let part):
            status = 206
            headers["Content-Range"] = "bytes \(part.first)-\(part.last)/\(length ?? 0)"
            stream.start(length: part.count, skip: part.first, count: part.count)
        case .unsatisfiable:
            return HTTPServerResponse(status: 416, headers: ["Content-Range": "bytes */\(length ?? 0)"])
        }
        return HTTPServerResponse(status: status, headers: headers, stream: stream.body)
    }

    static let notFound = HTTPServerResponse(status: 404, headers: ["Content-Type": "text/plain"], body: Data("Not found\n".utf8))
}

/// One transfer's forwarding state, used on its thread only: the body being streamed, the bytes still to skip
/// (before a range) and still to send; for an encrypted file, its cipher and the piece held back until the hash matches.
final class MediaStreamState: @unchecked Sendable {
    private(set) var body: HTTPStreamingBody?
    private var skip: Int64 = 0
    private(set) var remaining: Int64 = .max
    private let cipher: AttachmentCipher?
    private var held: [UInt8] = []

    private let stallTimeout: Duration

    init(keys: AttachmentKeys? = nil, stallTimeout: Duration = .seconds(30)) {
        cipher = keys.flatMap { try? AttachmentCipher.decrypting($0) }
        self.stallTimeout = stallTimeout
    }

    var encrypted: Bool { cipher != nil }

    /// Ends the answer: an encrypted file's held-back piece goes only when its hash matched (else the transfer fails).
    func finish(failed: Bool, logger: Logger) {
        guard let body else { return }
        guard let cipher, !failed else { return body.finish(failed: failed) }
        guard cipher.verify() else {
            logger.warning("An encrypted Matrix file did not match its hash: its transfer to an XMPP client was cut short")
            return body.finish(failed: true)
        }
        let last = held
        held = []
        let sent = last.isEmpty || last.withUnsafeBytes { body.write($0, stallTimeout: stallTimeout) }
        body.finish(failed: !sent)
    }

    func start(length: Int64?, skip: Int64, count: Int64) {
        body = HTTPStreamingBody(length: length)
        self.skip = skip
        remaining = count
    }

    /// Forwards what of `chunk` belongs to the answer; false stops the download (the range is complete, or the
    /// client is gone or stalled).
    func forward(_ chunk: UnsafeRawBufferPointer, stallTimeout: Duration) -> Bool {
        guard let body else { return false }
        var bytes = chunk[...]
        if skip > 0 {
            let dropped = Int(min(Int64(bytes.count), skip))
            skip -= Int64(dropped)
            bytes = bytes.dropFirst(dropped)
            if bytes.isEmpty { return true }
        }
        let take = Int(min(Int64(bytes.count), remaining))
        if let cipher {
            // Decrypted, and sent one piece late: the last piece waits for the hash (see ``finish(failed:logger:)``).
            let plain = cipher.update(UnsafeRawBufferPointer(rebasing: bytes.prefix(take)))
            let previous = held
            held = plain
            guard previous.isEmpty || previous.withUnsafeBytes({ body.write($0, stallTimeout: stallTimeout) }) else { return false }
        } else {
            guard body.write(UnsafeRawBufferPointer(rebasing: bytes.prefix(take)), stallTimeout: stallTimeout) else { return false }
        }
        if remaining != .max { remaining -= Int64(take) }
        return remaining > 0
    }
}

/// Resumes a continuation once; later answers are ignored. Thread-safe.
final class OnceAnswer: Sendable {
    private let continuation: Mutex<CheckedContinuation<HTTPServerResponse, Never>?>

    init(_ continuation: CheckedContinuation<HTTPServerResponse, Never>) { self.continuation = Mutex(continuation) }

    func give(_ response: HTTPServerResponse) {
        continuation.withLock { $0.take() }?.resume(returning: response)
    }

    deinit { continuation.withLock { $0.take() }?.resume(returning: HTTPServerResponse(status: 503)) }
}

/// At most one log line a minute for refused media links, carrying the count held back since the last. Thread-safe.
final class RefusedLinkLog: Sendable {
    private struct Window {
        var start: ContinuousClock.Instant?
        var suppressed = 0
    }
    private let window = Mutex(Window())
    private let interval: Duration

    init(interval: Duration = .seconds(60)) { self.interval = interval }

    /// Records a refusal at `now`: the number held back before it when a line is due, else nil.
    func refused(now: ContinuousClock.Instant) -> Int? {
        window.withLock { window in
            if let start = window.start, now - start < interval {
                window.suppressed += 1
                return nil
            }
            defer { window = Window(start: now, suppressed: 0) }
            return window.suppressed
        }
    }
}
