import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import Matrix
import Media
import Synchronization
import XMPPComponent
#if canImport(Glibc)
import Glibc
#endif

/// Moves avatar images across (RICH.md §8); one for the whole bridge. I/O only — which avatar to set is the portal
/// machine's decision:
/// - XMPP → Matrix: the vCard (XEP-0054) of an occupant whose presence announced a photo hash (XEP-0153), checked
///   (``AvatarImage``), uploaded once per hash (`xmpp_avatars` remembers the `mxc://`).
/// - Matrix → XMPP: a Matrix avatar downloaded as the bot from the homeserver's authenticated media (spec v1.11
///   §10.7.3; the 96×96 thumbnail when the original is over the limit), checked, kept in `matrix_avatars`.
/// Refusals (too large, not an image, wrong hash, bad base64) are logged at most once a minute. Runs on any task.
final class AvatarFetcher: Sendable {
    private let settings: MediaSettings
    private let importer: MediaImporter
    private let store: Store
    /// The largest XMPP avatar taken, in bytes.
    let limit: Int
    /// The largest image a puppet's vCard carries, in bytes: a larger Matrix avatar goes as the homeserver's
    /// thumbnail (XEP-0153 §5 recommends small images; the whole vCard travels base64-encoded in one stanza).
    let vCardLimit: Int
    private let refusals = RefusedLinkLog()
    private let logger: Logger

    init(settings: MediaSettings, importer: MediaImporter, store: Store, limit: Int = AvatarImage.defaultLimit,
         vCardLimit: Int = AvatarImage.defaultVCardLimit, logger: Logger) {
        self.settings = settings
        self.importer = importer
        self.store = store
        self.limit = limit
        self.vCardLimit = vCardLimit
        self.logger = logger
    }

    // MARK: XMPP → Matrix

    /// The `mxc://` of the XMPP avatar `sha1`: from the store, else fetched from the vCards of `sources` in order
    /// (the first whose photo has that hash wins) through `xmpp` as `asker`, then uploaded as `ghost`. nil when no
    /// source gave it (logged) or the upload failed.
    func xmppAvatar(sha1: String, sources: [JID], asker: JID, xmpp: any XMPPLink, ghost: UserID) async -> MXCURI? {
        if let known = try? await store.xmppAvatarMXC(sha1: sha1) { return known }
        var lastRefusal: String?
        for source in sources {
            let vCard: XElement?
            do {
                vCard = try await xmpp.fetchVCard(of: source, as: asker)
            } catch {
                lastRefusal = "the vCard request failed: \(error)"
                continue
            }
            guard let vCard else { continue }
            switch AvatarImage.fromVCard(vCard, announced: sha1, limit: limit) {
            case nil:
                continue
            case .failure(let refusal)?:
                lastRefusal = refusal.description
            case .success(let image)?:
                guard let mxc = await upload(image, as: ghost) else { return nil }
                try? await store.recordXMPPAvatar(sha1: sha1, mxc: mxc)
                return mxc
            }
        }
        refused("An XMPP avatar was not bridged", reason: lastRefusal ?? "no vCard photo", metadata: ["avatar.sha1": sha1])
        return nil
    }

    private func upload(_ image: StoredAvatar, as ghost: UserID) async -> MXCURI? {
        guard let descriptor = MediaImporter.unlinkedTemporaryFile(prefix: "isthmus-avatar") else { return nil }
        defer { close(descriptor) }
        let written = image.data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == image.data.count else { return nil }
        let name = "avatar." + (MediaKind.fileExtension(forMediaType: image.mediaType) ?? "img")
        switch await importer.upload(MediaImporter.path(of: descriptor), contentType: image.mediaType, name: name, as: ghost) {
        case .success(let mxc): return mxc
        case .failure(let reason):
            logger.warning("Could not upload an XMPP avatar", metadata: ["matrix.user.id": ghost.rawValue, "reason": reason.text])
            return nil
        }
    }

    // MARK: Matrix → XMPP

    /// The image of the Matrix avatar `mxc`, for vCards: from the store, else downloaded and checked. nil when it
    /// cannot be had (logged).
    func matrixAvatar(mxc reference: MXCURI) async -> StoredAvatar? {
        if let known = try? await store.matrixAvatar(mxc: reference) { return known }
        let base = "\(settings.homeserverBase)/_matrix/client/v1/media/"
        let path = "\(PercentEncoding.encode(reference.server))/\(PercentEncoding.encode(reference.mediaID))"
        var bytes = await download(base + "download/" + path, limit: vCardLimit)
        if bytes == nil || (bytes.map { $0.count > vCardLimit } ?? false) {
            // XEP-0153 §5 asks for small images: the homeserver's thumbnail when the original is too large.
            bytes = await download(base + "thumbnail/" + path + "?width=96&height=96&method=scale", limit: vCardLimit)
        }
        guard let bytes else {
            refused("A Matrix avatar was not bridged", reason: "the homeserver did not give it", metadata: ["matrix.mxc": "\(reference)"])
            return nil
        }
        switch AvatarImage.check(bytes, announced: nil, limit: vCardLimit) {
        case .failure(let refusal):
            refused("A Matrix avatar was not bridged", reason: refusal.description, metadata: ["matrix.mxc": "\(reference)"])
            return nil
        case .success(let image):
            try? await store.recordMatrixAvatar(mxc: reference, image)
            return image
        }
    }

    /// The body of a GET as the bot, when it is 200 and at most one byte over the limit (that byte tells "too large").
    private func download(_ url: String, limit: Int) async -> [UInt8]? {
        guard let credential = await settings.authorization() else { return nil }
        var request = CurlEasyTransfer.Request(url: url)
        request.headers = [credential.header]
        request.caFile = settings.caFile
        request.stallTimeout = settings.stallTimeout
        request.totalTimeout = .seconds(60)
        let body = Body(limit: limit + 1)
        let result = await CurlEasyTransfer.performDetached(request, onHead: { $0.status == 200 }, onData: body.append)
        if body.full { return body.bytes }   // stopped at the limit: the caller sees it is too large
        guard case .success(let head) = result, head.status == 200 else { return nil }
        return body.bytes
    }

    /// A body kept in memory up to `limit` bytes; the transfer stops there.
    private final class Body: @unchecked Sendable {
        let limit: Int
        var bytes: [UInt8] = []
        var full = false
        init(limit: Int) { self.limit = limit }
        func append(_ chunk: UnsafeRawBufferPointer) -> Bool {
            bytes.append(contentsOf: chunk.prefix(limit - bytes.count))
            full = bytes.count >= limit
            return !full
        }
    }

    private func refused(_ message: String, reason: String, metadata: [String: String]) {
        guard let suppressed = refusals.refused(now: .now) else { return }
        var metadata = metadata
        metadata["reason"] = reason
        metadata["avatar.refusals.suppressed"] = String(suppressed)
        logger.warning(message, metadata: metadata)
    }
}
