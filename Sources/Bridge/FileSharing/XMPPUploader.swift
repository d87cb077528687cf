import FoundationEssentials
import IsthmusCommon
import MatrixCrypto
import Media
import Synchronization
import XMPP
#if canImport(Glibc)
import Glibc
#endif

/// `media.xmpp_upload`: Matrix files re-uploaded to the XMPP server's XEP-0363 service, so that XMPP users fetch
/// them from there instead of from the bridge's media route. Finds the service once (disco#items on the server's
/// domain, then disco#info of each item, XEP-0363 §3), streams the file from the homeserver's authenticated media into
/// an unlinked temporary file (memory stays bounded), asks for a slot as the bridge's JID with its name, size and
/// type (§4), and PUTs the file with the slot's allowed headers only. Any failure makes the caller fall back to the
/// bridge-served link; the reason is logged at most once a minute per kind. Runs on any task; transfers on their own
/// threads, sharing ``MediaImporter``'s turns.
///
/// Exactly once: the portal calls this before the message is mapped, so a crash between the upload and the send
/// redoes the upload (a new slot, the old file left orphaned on the service) — never a second message.
final class XMPPUploader: Sendable {
    /// What became of a file.
    enum Outcome: Sendable, Equatable {
        /// On the service: send this GET URL.
        case uploaded(getURL: String)
        /// Not uploaded: send the bridge's own link. Why, for the log.
        case fallback(FallbackReason)
    }

    /// Why a file goes as the bridge's link.
    enum FallbackReason: Sendable, Equatable, CustomStringConvertible {
        case noService
        case tooLarge(size: Int64, limit: Int64)
        case slotRefused
        case transferFailed(String)

        var description: String {
            switch self {
            case .noService: "the XMPP server offers no XEP-0363 upload service"
            case .tooLarge(let size, let limit): "the file (\(size) bytes) is larger than the upload service takes (\(limit))"
            case .slotRefused: "the upload service refused a slot"
            case .transferFailed(let why): why
            }
        }

        /// One log line a minute per kind.
        var kind: String {
            switch self {
            case .noService: "no-service"
            case .tooLarge: "too-large"
            case .slotRefused: "slot-refused"
            case .transferFailed: "transfer-failed"
            }
        }
    }

    private enum Discovery { case unknown, found(HTTPUpload.Service), absent }

    private let settings: MediaSettings
    private let importer: MediaImporter
    private let xmpp: any XMPPLink
    /// Where the service is looked for: the XMPP server's domain.
    private let serverDomain: JID
    /// Who asks (the bridge's bare JID, `isthmus@<component>`): the uploader the service's quota counts.
    private let requester: JID
    private let discovery = Mutex(Discovery.unknown)
    private let lastLogged = Mutex<[String: ContinuousClock.Instant]>([:])
    private let clock: TimeSource
    private let logger: Logger

    init(settings: MediaSettings, importer: MediaImporter, xmpp: any XMPPLink, serverDomain: JID, requester: JID,
         clock: TimeSource = .system, logger: Logger) {
        self.clock = clock
        self.settings = settings
        self.importer = importer
        self.xmpp = xmpp
        self.serverDomain = serverDomain
        self.requester = requester
        self.logger = logger
    }

    /// The XMPP server's domain for a component domain: its parent (`bridge.example.org` → `example.org`); nil when
    /// it has none.
    static func serverDomain(ofComponent component: String) -> JID? {
        guard let dot = component.firstIndex(of: "."), component[component.index(after: dot)...].contains(where: { $0 != "." }) else { return nil }
        return JID(String(component[component.index(after: dot)...]))
    }

    /// Uploads the file at `mxc` under `name` (decrypted first with `keys` when it is encrypted); `declaredSize` and
    /// `mediaType` from the event's `info`. Does network and file I/O; never throws: a failure is a fallback.
    func upload(mxc: MXCURI, keys: AttachmentKeys? = nil, name: String, declaredSize: Int64?, mediaType: String?) async -> Outcome {
        let outcome = await attempt(mxc: mxc, keys: keys, name: name, declaredSize: declaredSize, mediaType: mediaType)
        if case .fallback(let reason) = outcome { logOnce(reason, mxc: mxc) }
        return outcome
    }

    private func attempt(mxc reference: MXCURI, keys: AttachmentKeys?, name: String, declaredSize: Int64?, mediaType: String?) async -> Outcome {
        guard let service = await service() else { return .fallback(.noService) }
        let limit = min(service.maxFileSize ?? .max, await importer.maxSize())
        if let declaredSize, declaredSize > limit { return .fallback(.tooLarge(size: declaredSize, limit: limit)) }
        await importer.turns.acquire()
        defer { importer.turns.release() }
        let url = settings.homeserverBase + "/_matrix/client/v1/media/download/" + reference.server
            + "/" + reference.mediaID
        var fetched: MediaImporter.FetchedFile
        switch await importer.fetch(XMPPFileLink(url: url, name: name, mediaType: mediaType, caption: nil, bare: false),
                                    limit: limit, homeserver: true) {
        case .success(let file): fetched = file
        case .failure(let reason):
            if reason.text.hasPrefix("too large") { return .fallback(.tooLarge(size: declaredSize ?? limit + 1, limit: limit)) }
            return .fallback(.transferFailed("downloading from the homeserver failed: \(reason.text)"))
        }
        if let keys {
            // An encrypted file goes to the upload service as its cleartext (the XMPP room reads it as any file);
            // one whose ciphertext is not what its sender hashed goes as the bridge's link, which refuses it too.
            let opened = await AttachmentFiles.decrypted(fetched.descriptor, keys: keys)
            close(fetched.descriptor)
            guard let opened else {
                return .fallback(.transferFailed("the encrypted file was not opened: its hash does not match, or decrypting it failed"))
            }
            fetched = MediaImporter.FetchedFile(path: MediaImporter.path(of: opened.descriptor), descriptor: opened.descriptor, size: opened.size,
                                                contentType: nil, prefix: [])
        }
        defer { close(fetched.descriptor) }
        var contentType = MediaKind.essence(mediaType ?? fetched.contentType)
        if contentType.isEmpty { contentType = MediaKind.mediaType(forFileName: name) ?? "application/octet-stream" }
        let slot: HTTPUpload.Slot?
        do {
            slot = try await xmpp.requestUploadSlot(on: service.jid, fileName: name, size: fetched.size, contentType: contentType, as: requester)
        } catch {
            return .fallback(.transferFailed("asking for a slot failed: \(error)"))
        }
        guard let slot else { return .fallback(.slotRefused) }
        var request = CurlEasyTransfer.Request(url: slot.putURL)
        request.headers = slot.putHeaders.map { "\($0.name): \($0.value)" }
        request.upload = (fetched.path, contentType)
        request.putsUpload = true
        request.caFile = settings.caFile
        request.stallTimeout = settings.stallTimeout
        request.totalTimeout = .seconds(600)
        switch await CurlEasyTransfer.performDetached(request, onHead: { _ in true }, onData: { _ in true }) {
        case .success(let head) where head.status == 200 || head.status == 201:
            return .uploaded(getURL: slot.getURL)
        case .success(let head):
            return .fallback(.transferFailed("the upload service answered the PUT with \(head.status)"))
        case .failure(let failure):
            return .fallback(.transferFailed("the PUT failed: \(failure)"))
        }
    }

    /// The service, found once; a link error (not connected) is not remembered, so it is asked again next time.
    private func service() async -> HTTPUpload.Service? {
        switch discovery.withLock({ $0 }) {
        case .found(let service): return service
        case .absent: return nil
        case .unknown: break
        }
        do {
            let found = try await xmpp.findUploadService(on: serverDomain, as: requester)
            discovery.withLock { $0 = found.map(Discovery.found) ?? .absent }
            if let found {
                logger.info("XMPP upload service found", metadata: ["xmpp.upload.service": "\(found.jid)",
                                                                   "xmpp.upload.max_size": "\(found.maxFileSize.map(String.init) ?? "none")"])
            }
            return found
        } catch {
            return nil
        }
    }

    /// Forgets the service (a new XMPP connection may reach another server configuration).
    func forgetService() { discovery.withLock { $0 = .unknown } }

    private func logOnce(_ reason: FallbackReason, mxc: MXCURI) {
        let now = clock.now()
        let due = lastLogged.withLock { last -> Bool in
            if let previous = last[reason.kind], now - previous < .seconds(60) { return false }
            last[reason.kind] = now
            return true
        }
        guard due else { return }
        logger.info("A Matrix file goes as the bridge's link instead of an XMPP upload",
                    metadata: ["matrix.media": "\(mxc)", "reason": "\(reason)"])
    }
}
