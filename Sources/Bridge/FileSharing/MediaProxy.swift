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
/// An encrypted file's link carries its secrets: see `MediaProxy+Encrypted.swift`.
public struct MediaProxy: MediaRequestHandler {
    let settings: MediaSettings
    let slots: TransferSlots
    /// Downloads an encrypted file whole before anything of it is served.
    let fetcher: MediaImporter
    let logger: Logger
    /// Refused links are logged at most once a minute, with how many were held back (a scanner must not flood the log).
    let refusals = RefusedLinkLog()
    /// Requests refused for want of a free transfer, logged likewise.
    let busy = RefusedLinkLog()

    public init(settings: MediaSettings, logger: Logger) {
        self.settings = settings
        slots = TransferSlots(limit: settings.maxConcurrentTransfers)
        fetcher = MediaImporter(settings: settings, logger: logger)
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
        let (reference, name) = (link.reference, link.fileName)
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
        if let keys = link.secret.flatMap(AttachmentKeys.init(linkSecret:)) {
            return await serveEncrypted(reference, keys: keys, name: name, etag: etag, range: headers["range"])
        }
        var request = CurlEasyTransfer.Request(url: "\(settings.homeserverBase)/_matrix/client/v1/media/download/"
                                                 + "\(PercentEncoding.encode(reference.server))/\(reference.mediaID)")
        request.headers = [credential.header]
        request.caFile = settings.caFile
        request.stallTimeout = settings.stallTimeout
        request.totalTimeout = .seconds(24 * 3600)  // a large file to a slow (but moving) client; stalls end it sooner
        let range = headers["range"]
        let upstream = request
        let stallTimeout = settings.stallTimeout
        let slots = slots, logger = logger
        return await withCheckedContinuation { (continuation: CheckedContinuation<HTTPServerResponse, Never>) in
            let answer = OnceAnswer(continuation)
            do {
                try DedicatedThread.start(name: "isthmus-media") {
                    defer { slots.release() }
                    let stream = MediaStreamState()
                    let result = CurlEasyTransfer.perform(upstream, onHead: { head in
                        let response = Self.response(to: head, name: name, etag: etag, range: range, stream: stream)
                        answer.give(response)
                        return response.stream != nil
                    }, onData: { chunk in
                        stream.forward(chunk, stallTimeout: stallTimeout)
                    })
                    switch result {
                    case .success:
                        stream.body?.finish(failed: stream.remaining > 0 && stream.remaining != .max)
                    case .failure(.aborted) where stream.remaining == 0:
                        stream.body?.finish()
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
        let contentType = head.headers["content-type"].flatMap { $0.isEmpty ? nil : $0 } ?? "application/octet-stream"
        var headers = fileHeaders(contentType: contentType, name: name, etag: etag)
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

    /// The headers of a file's answer (its length and range are added by the caller).
    static func fileHeaders(contentType: String, name: String, etag: String) -> [String: String] {
        let kind = MediaKind(mediaType: contentType)
        return [
            "Content-Type": contentType,
            "Content-Disposition": "\(kind == .file ? "attachment" : "inline"); filename=\"\(name)\"",
            "ETag": etag,
            "Accept-Ranges": "bytes",
            "Cache-Control": "private, max-age=86400",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox; default-src 'none'",
        ]
    }

    static let notFound = HTTPServerResponse(status: 404, headers: ["Content-Type": "text/plain"], body: Data("Not found\n".utf8))
}

/// One transfer's forwarding state, used on its thread only: the body being streamed, the bytes still to skip
/// (before a range) and still to send.
final class MediaStreamState: @unchecked Sendable {
    private(set) var body: HTTPStreamingBody?
    private var skip: Int64 = 0
    private(set) var remaining: Int64 = .max

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
        guard body.write(UnsafeRawBufferPointer(rebasing: bytes.prefix(take)), stallTimeout: stallTimeout) else { return false }
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
