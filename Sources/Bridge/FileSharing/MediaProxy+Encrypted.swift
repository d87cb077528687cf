import FoundationEssentials
import IsthmusCommon
import Matrix
import MatrixAppService
import MatrixCrypto
import Media
#if canImport(Glibc)
import Glibc
#endif

/// Encrypted Matrix files (spec §11.12.4.5) on the media route. The link carries the file's secrets
/// (``AttachmentKeys``): the ciphertext is downloaded whole into an unlinked temporary file (within the upload limit),
/// its hash checked and decrypted (``AttachmentFiles``), and only then served — ranges included, typed by its name (the
/// homeserver knows it as `application/octet-stream`). Nothing goes out before the hash matched: AES-CTR is malleable,
/// and a homeserver that altered the ciphertext could otherwise flip chosen bits of what a client shows as it loads.
/// A file that does not match is answered 502 and logged.
extension MediaProxy {
    /// Serves the file at `reference` that `keys` open. Called holding a transfer slot, which it releases (when the
    /// answer is sent, for a file served).
    func serveEncrypted(_ reference: MXCURI, keys: AttachmentKeys, name: String, etag: String, range: String?) async -> HTTPServerResponse {
        var slotHandedOn = false
        defer { if !slotHandedOn { slots.release() } }
        let metadata: Logger.Metadata = ["matrix.mxc": "\(reference)"]
        let url = "\(settings.homeserverBase)/_matrix/client/v1/media/download/\(PercentEncoding.encode(reference.server))/\(reference.mediaID)"
        let fetched: MediaImporter.FetchedFile
        switch await fetcher.fetch(XMPPFileLink(url: url, name: name, mediaType: nil, caption: nil, bare: false),
                                   limit: await fetcher.maxSize(), homeserver: true) {
        case .success(let file):
            fetched = file
        case .failure(let reason):
            if reason.status == 404 { return Self.notFound }
            logger.warning("An encrypted Matrix file could not be fetched from the homeserver",
                           metadata: metadata.merging(["media.error": reason.text]) { $1 })
            return Self.badGateway
        }
        let opened = await AttachmentFiles.decrypted(fetched.descriptor, keys: keys)
        close(fetched.descriptor)
        guard let opened else {
            logger.warning("An encrypted Matrix file was not served: its ciphertext does not match its hash, or it could not be decrypted",
                           metadata: metadata)
            return Self.badGateway
        }
        var headers = Self.fileHeaders(contentType: MediaKind.mediaType(forFileName: name) ?? "application/octet-stream", name: name, etag: etag)
        var (status, first, count) = (200, Int64(0), opened.size)
        switch ByteRange.parse(range, length: opened.size) {
        case .whole:
            break
        case .part(let part):
            (status, first, count) = (206, part.first, part.count)
            headers["Content-Range"] = "bytes \(part.first)-\(part.last)/\(opened.size)"
        case .unsatisfiable:
            close(opened.descriptor)
            return HTTPServerResponse(status: 416, headers: ["Content-Range": "bytes */\(opened.size)"])
        }
        let body = HTTPStreamingBody(length: count)
        let (slots, stallTimeout, descriptor, start, length) = (slots, settings.stallTimeout, opened.descriptor, first, count)
        do {
            try DedicatedThread.start(name: "isthmus-media") {
                defer {
                    close(descriptor)
                    slots.release()
                }
                body.finish(failed: !Self.copy(descriptor, from: start, count: length, to: body, stallTimeout: stallTimeout))
            }
            slotHandedOn = true
        } catch {
            close(descriptor)
            return HTTPServerResponse(status: 503, headers: ["Retry-After": "5"])
        }
        return HTTPServerResponse(status: status, headers: headers, stream: body)
    }

    /// Writes `count` bytes of the file at `descriptor` from offset `first` into `body`; false when reading failed or
    /// the client went away or stalled.
    static func copy(_ descriptor: Int32, from first: Int64, count: Int64, to body: HTTPStreamingBody, stallTimeout: Duration) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var (offset, left) = (first, count)
        while left > 0 {
            let read = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, min($0.count, Int(left)), off_t(offset)) }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else { return false }
            guard buffer.withUnsafeBytes({ body.write(UnsafeRawBufferPointer(rebasing: $0.prefix(read)), stallTimeout: stallTimeout) }) else {
                return false
            }
            offset += Int64(read)
            left -= Int64(read)
        }
        return true
    }

    static let badGateway = HTTPServerResponse(status: 502, headers: ["Content-Type": "text/plain"], body: Data("Bad gateway\n".utf8))
}
