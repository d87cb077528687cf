import FoundationEssentials
import IsthmusCommon
import Matrix
import MatrixCrypto
import Media
import MatrixClient
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// XMPP → Matrix files (RICH.md §6): fetches a shared file's URL into a temporary file (streamed: memory per transfer
/// stays bounded), then uploads it as the ghost (`POST /_matrix/media/v3/upload?user_id=…`) and describes it for a
/// media message. The fetch refuses loopback and private addresses unless the config allows them (checked on the
/// address connected to; see ``CurlEasyTransfer``), other schemes, redirects to other schemes, files above the limit
/// (`media.max_size`, else the homeserver's `m.upload.size`) and stalled or endless transfers. Runs on any task; each
/// transfer on its own thread; at most `maxConcurrentTransfers` at once (the others wait their turn).
final class MediaImporter: Sendable {
    /// What became of a file.
    enum Outcome: Sendable, Equatable {
        /// Uploaded: post this.
        case uploaded(OutgoingMedia)
        /// Not bridged as a file (the link goes as text), and why — for the log.
        case declined(String)
        /// The homeserver could not take it now (network, 5xx): try the delivery again later.
        case homeserverUnavailable(String)
    }

    private let settings: MediaSettings
    let turns: TransferTurns
    private let uploadLimit = Mutex<Int64?>(nil)
    private let logger: Logger

    init(settings: MediaSettings, logger: Logger) {
        self.settings = settings
        turns = TransferTurns(limit: settings.maxConcurrentTransfers)
        self.logger = logger
    }

    /// Fetches `link` and uploads it as `ghost`; `encrypted`: for an encrypted room, the homeserver gets only its
    /// ciphertext (spec §11.12.4.5) and the outcome carries the secrets. Does network and file I/O.
    func importFile(_ link: XMPPFileLink, as ghost: UserID, encrypted: Bool = false) async -> Outcome {
        guard let scheme = link.url.split(separator: ":", maxSplits: 1).first?.lowercased(), scheme == "http" || scheme == "https" else {
            return .declined("not an http(s) URL")
        }
        let limit = await maxSize()
        await turns.acquire()
        defer { turns.release() }
        let fetched: FetchedFile
        switch await fetch(link, limit: limit) {
        case .success(let file): fetched = file
        case .failure(let reason): return .declined(reason.text)
        }
        defer { close(fetched.descriptor) }
        let name = Self.fileName(link)
        var mediaType = MediaKind.essence(fetched.contentType)
        if mediaType.isEmpty || mediaType == "application/octet-stream" {
            mediaType = link.mediaType.map { MediaKind.essence($0) } ?? MediaKind.mediaType(forFileName: name) ?? "application/octet-stream"
        }
        if mediaType.isEmpty { mediaType = "application/octet-stream" }
        let kind = MediaKind(mediaType: mediaType)
        var info = MediaInfo(mimeType: mediaType, size: fetched.size)
        if kind == .image, let dimensions = ImageDimensions.read(fetched.prefix) {
            info.width = Int64(dimensions.width)
            info.height = Int64(dimensions.height)
        }
        var path = fetched.path, uploadType = mediaType, keys: AttachmentKeys?, sealedDescriptor: Int32?
        if encrypted {
            guard let sealed = await AttachmentFiles.encrypted(fetched.descriptor) else { return .declined("the file could not be encrypted") }
            (path, uploadType, keys, sealedDescriptor) = (Self.path(of: sealed.descriptor), "application/octet-stream", sealed.keys, sealed.descriptor)
        }
        defer { if let sealedDescriptor { close(sealedDescriptor) } }
        // An encrypted file's name stays out of the homeserver's sight, as its content does.
        switch await upload(path, contentType: uploadType, name: encrypted ? "" : name, as: ghost) {
        case .success(let mxc):
            return .uploaded(OutgoingMedia(msgtype: MessageType(rawValue: kind.rawValue), mxc: mxc, fileName: name, info: info, keys: keys))
        case .failure(let failure):
            return failure.unavailable ? .homeserverUnavailable(failure.text) : .declined(failure.text)
        }
    }

    /// `fallback` (the text of the message that shares `link`) as a media message with the file fetched and uploaded
    /// as `ghost`, and nil; or `fallback` as it is and why the file went as a link (for the caller's log). Throws
    /// ``MatrixLinkError/unavailable(_:)`` when the homeserver could not take the upload now (retry the delivery).
    func message(sharing link: XMPPFileLink, fallback: OutgoingMatrixMessage, as ghost: UserID, encrypted: Bool = false) async throws
        -> (message: OutgoingMatrixMessage, declined: String?) {
        switch await importFile(link, as: ghost, encrypted: encrypted) {
        case .uploaded(let media):
            var message = fallback
            message.kind = .text
            message.body = link.caption ?? media.fileName
            message.html = nil
            message.media = media
            message.profile?.hasFallback = nil   // the caption names no one: the relay's profile alone says who sent it
            return (message, nil)
        case .declined(let reason):
            return (fallback, reason)
        case .homeserverUnavailable(let reason):
            throw MatrixLinkError.unavailable(reason)
        }
    }

    /// The file's name: the sender's, else the URL's last path segment (percent-decoded, sanitized), else `file`.
    static func fileName(_ link: XMPPFileLink) -> String {
        if let name = link.name, !name.isEmpty { return name }
        var path = link.url
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = String(path[..<end]) }
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        let decoded = PercentEncoding.decode(last) ?? last
        return path.split(separator: "/").count <= 2 || decoded.isEmpty ? "file" : MediaLinkSigner.sanitizedFileName(decoded)
    }

    // MARK: Fetching

    struct FetchedFile: Sendable {
        /// `/proc/self/fd/N` of the (already unlinked) file; ``descriptor`` must be closed when done.
        var path: String
        var descriptor: Int32
        var size: Int64
        var contentType: String?
        /// The first bytes (for image dimensions).
        var prefix: [UInt8]
    }

    struct Reason: Error {
        var text: String
        var unavailable = false
        /// The server's answer when it refused the file (404: no such file).
        var status: Int?
    }

    /// The path that reaches the file open at `descriptor` (for libcurl, which takes paths).
    static func path(of descriptor: Int32) -> String { "/proc/self/fd/\(descriptor)" }

    /// A new temporary file, already unlinked (reached as `/proc/self/fd/N`, so a crash leaves nothing behind): its
    /// descriptor, or nil when none could be made.
    static func unlinkedTemporaryFile(prefix: String) -> Int32? {
        var template = Array("\(temporaryDirectory)/\(prefix)-XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { return nil }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        return descriptor
    }

    /// Fetches `link` into an unlinked temporary file. `homeserver`: the URL is the homeserver's (as the bot or the
    /// account, with the homeserver's CA; no address check, no redirects) rather than an XMPP user's.
    func fetch(_ link: XMPPFileLink, limit: Int64, homeserver: Bool = false) async -> Result<FetchedFile, Reason> {
        var credential: (header: String, token: AccessToken?)?
        if homeserver {
            credential = await settings.authorization()
            if credential == nil { return .failure(Reason(text: "the bridge's Matrix account has no usable session", unavailable: true)) }
        }
        // The file is unlinked at once and reached through its descriptor (`/proc/self/fd/N`): nothing is left behind
        // when the bridge crashes mid-transfer.
        guard let descriptor = Self.unlinkedTemporaryFile(prefix: "isthmus-media") else {
            return .failure(Reason(text: "no temporary file"))
        }
        guard let file = fdopen(dup(descriptor), "wb") else {
            close(descriptor)
            return .failure(Reason(text: "no temporary file"))
        }
        let path = Self.path(of: descriptor)
        var request = CurlEasyTransfer.Request(url: link.url)
        if let credential {
            request.headers = [credential.header]
            request.caFile = settings.caFile
        } else {
            request.refusesSpecialAddresses = !settings.allowPrivateAddresses
            request.followsRedirects = true
        }
        request.stallTimeout = settings.stallTimeout
        request.totalTimeout = .seconds(600)
        let state = FetchState(limit: limit, bare: link.bare, file: file)
        let result = await CurlEasyTransfer.performDetached(request, onHead: { state.head($0) }, onData: { state.data($0) })
        fclose(file)
        if state.status == 401 { await settings.refused(credential?.token) }
        let outcome: Result<FetchedFile, Reason>
        if let declined = state.declined {
            outcome = .failure(Reason(text: declined, status: state.status == 0 ? nil : state.status))
        } else {
            switch result {
            case .success(let head):
                outcome = .success(FetchedFile(path: path, descriptor: descriptor, size: state.size, contentType: head.headers["content-type"], prefix: state.prefix))
            case .failure(.refusedAddress(let why)):
                outcome = .failure(Reason(text: "the link points to a \(why) address (media.allow_private_addresses is off)"))
            case .failure(let failure):
                outcome = .failure(Reason(text: "fetching failed: \(failure)"))
            }
        }
        if case .failure = outcome { close(descriptor) }
        return outcome
    }

    /// The state of one fetch, on its transfer thread only.
    private final class FetchState: @unchecked Sendable {
        let limit: Int64
        let bare: Bool
        let file: UnsafeMutablePointer<FILE>
        var size: Int64 = 0
        var prefix: [UInt8] = []
        var declined: String?
        /// The answer's status, once its head came.
        var status = 0

        init(limit: Int64, bare: Bool, file: UnsafeMutablePointer<FILE>) {
            self.limit = limit
            self.bare = bare
            self.file = file
        }

        func head(_ head: CurlEasyTransfer.Head) -> Bool {
            status = head.status
            guard head.status == 200 else { declined = "the server answered \(head.status)"; return false }
            if let length = head.headers["content-length"].flatMap({ Int64($0) }), length > limit {
                declined = "too large (\(length) bytes, the limit is \(limit))"
                return false
            }
            if bare, MediaKind.essence(head.headers["content-type"]) == "text/html" {
                declined = "a web page, not a file"
                return false
            }
            return true
        }

        func data(_ chunk: UnsafeRawBufferPointer) -> Bool {
            size += Int64(chunk.count)
            guard size <= limit else { declined = "too large (more than \(limit) bytes)"; return false }
            if prefix.count < ImageDimensions.prefixLength {
                prefix.append(contentsOf: chunk.prefix(ImageDimensions.prefixLength - prefix.count))
            }
            return fwrite(chunk.baseAddress, 1, chunk.count, file) == chunk.count
        }
    }

    // MARK: The homeserver

    /// `media.max_size`, else the homeserver's `m.upload.size` (asked once), else 50 MiB (Synapse's default).
    func maxSize() async -> Int64 {
        if let configured = settings.maxSize { return configured }
        if let known = uploadLimit.withLock({ $0 }) { return known }
        // Kept once the homeserver answered; an unanswered question is asked again next time.
        guard let body = await homeserverJSON("/_matrix/client/v1/media/config") else { return 50 << 20 }
        let size = body["m.upload.size"].flatMap { value -> Int64? in
            switch value {
            case .integer(let number): number > 0 ? number : nil
            case .double(let number): number.isFinite && number > 0 && number < 9e15 ? Int64(number) : nil
            default: nil
            }
        } ?? 50 << 20
        uploadLimit.withLock { $0 = size }
        return size
    }

    private func homeserverJSON(_ path: String) async -> [String: JSONValue]? {
        guard let credential = await settings.authorization() else { return nil }
        var request = CurlEasyTransfer.Request(url: settings.homeserverBase + path)
        request.headers = [credential.header]
        request.caFile = settings.caFile
        request.totalTimeout = .seconds(30)
        let collected = Collected()
        let result = await CurlEasyTransfer.performDetached(request, onHead: { _ in true }, onData: collected.append)
        if case .success(let head) = result, head.status == 401 { await settings.refused(credential.token) }
        guard case .success(let head) = result, head.status == 200, case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(collected.bytes)) else {
            return nil
        }
        return object
    }

    /// Uploads the file at `path` as `ghost` (the application service), or as the account in Matrix client mode;
    /// an empty `name` is not given to the homeserver.
    func upload(_ path: String, contentType: String, name: String, as ghost: UserID) async -> Result<MXCURI, Reason> {
        guard let credential = await settings.authorization() else {
            return .failure(Reason(text: "the bridge's Matrix account has no usable session", unavailable: true))
        }
        let query = (name.isEmpty ? "" : "filename=" + PercentEncoding.encode(name)) + settings.actingAs(ghost)
        var request = CurlEasyTransfer.Request(url: settings.homeserverBase + "/_matrix/media/v3/upload?" + query.trimmingPrefix("&"))
        request.headers = [credential.header]
        request.caFile = settings.caFile
        request.upload = (path, contentType)
        request.stallTimeout = settings.stallTimeout
        request.totalTimeout = .seconds(600)
        let collected = Collected()
        switch await CurlEasyTransfer.performDetached(request, onHead: { _ in true }, onData: collected.append) {
        case .success(let head):
            if head.status == 200, case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(collected.bytes)),
               case .string(let uri)? = object["content_uri"], let mxc = MXCURI(mxc: uri) {
                return .success(mxc)
            }
            let detail = String(decoding: collected.bytes.prefix(300), as: UTF8.self)
            // A refused token (the account's, renewed now) is tried again with the delivery, as a 5xx or 429 is.
            if head.status == 401 { await settings.refused(credential.token) }
            return .failure(Reason(text: "the homeserver refused the upload (\(head.status)): \(detail)",
                                   unavailable: head.status >= 500 || head.status == 429 || (head.status == 401 && credential.token != nil)))
        case .failure(let failure):
            return .failure(Reason(text: "uploading failed: \(failure)", unavailable: true))
        }
    }

    /// A small answer body, kept in memory (at most 64 KiB).
    private final class Collected: @unchecked Sendable {
        var bytes: [UInt8] = []
        func append(_ chunk: UnsafeRawBufferPointer) -> Bool {
            guard bytes.count + chunk.count <= 64 << 10 else { return false }
            bytes.append(contentsOf: chunk)
            return true
        }
    }

    static var temporaryDirectory: String {
        let environment = ProcessInfo.processInfo.environment["TMPDIR"] ?? ""
        return environment.isEmpty ? "/tmp" : environment
    }
}

/// At most `limit` transfers at once; the others wait in arrival order. Thread-safe.
final class TransferTurns: Sendable {
    private struct State {
        var inUse = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = max(1, limit) }

    /// Returns once a turn is free (at once when one is).
    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard state.inUse < limit else {
                    state.waiting.append(continuation)
                    return false
                }
                state.inUse += 1
                return true
            }
            if now { continuation.resume() }
        }
    }

    /// Hands the turn to the longest waiter, or frees it.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.inUse -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
