import FoundationEssentials
import IsthmusCommon
import Media
import MatrixClient
import Synchronization

/// Who the bridge is at the homeserver's media API.
public enum MediaIdentity: Sendable {
    /// The application service: the as_token, uploads made as the ghost named with `user_id`.
    case appService(token: String)
    /// The ordinary account of Matrix client mode: its session's token of the moment, uploads the account's own.
    case account(any AccessTokens)
}

/// What both media directions share: the homeserver and who the bridge is there (to download, and to upload as the
/// bot, a ghost or the account), the link signer, and the limits from `media:` in the config. Immutable.
public struct MediaSettings: Sendable {
    public var homeserverURL: URL
    public var identity: MediaIdentity
    /// CA file for an https homeserver (tests); nil: libcurl's default store.
    public var caFile: String?
    /// Signs the links of the bridge's media route; nil when the bridge serves no files (Matrix client mode: no
    /// listener), so Matrix files reach XMPP only through the XMPP server's upload service.
    public var signer: MediaLinkSigner?
    /// Largest file fetched from an XMPP link; nil: ask the homeserver (`m.upload.size`).
    public var maxSize: Int64?
    public var allowPrivateAddresses: Bool
    public var stallTimeout: Duration
    /// Transfers at once, each way.
    public var maxConcurrentTransfers: Int
    /// `media.xmpp_upload`: Matrix files go to the XMPP server's XEP-0363 service (see ``XMPPUploader``).
    public var xmppUpload = false

    public init(homeserverURL: URL, identity: MediaIdentity, caFile: String? = nil, signer: MediaLinkSigner?, maxSize: Int64? = nil,
                allowPrivateAddresses: Bool = false, stallTimeout: Duration = .seconds(30), maxConcurrentTransfers: Int = 8) {
        self.homeserverURL = homeserverURL
        self.identity = identity
        self.caFile = caFile
        self.signer = signer
        self.maxSize = maxSize
        self.allowPrivateAddresses = allowPrivateAddresses
        self.stallTimeout = stallTimeout
        self.maxConcurrentTransfers = maxConcurrentTransfers
    }

    public init(homeserverURL: URL, asToken: String, caFile: String? = nil, signer: MediaLinkSigner, maxSize: Int64? = nil,
                allowPrivateAddresses: Bool = false, stallTimeout: Duration = .seconds(30), maxConcurrentTransfers: Int = 8) {
        self.init(homeserverURL: homeserverURL, identity: .appService(token: asToken), caFile: caFile, signer: signer, maxSize: maxSize,
                  allowPrivateAddresses: allowPrivateAddresses, stallTimeout: stallTimeout, maxConcurrentTransfers: maxConcurrentTransfers)
    }

    /// The homeserver's base URL without a trailing `/`.
    var homeserverBase: String {
        var base = homeserverURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    /// The credential of a homeserver call made now: the `Authorization` header line, and the account's token it
    /// carries (to report a refusal with ``refused(_:)``). Nil when the account has no usable session (it stalled:
    /// the operator was told).
    func authorization() async -> (header: String, token: AccessToken?)? {
        switch identity {
        case .appService(let token):
            return ("Authorization: Bearer \(token)", nil)
        case .account(let tokens):
            guard let token = try? await tokens.current() else { return nil }
            return ("Authorization: Bearer \(token.secret)", token)
        }
    }

    /// The homeserver answered 401 to a call made with `token`: the account's session renews it for the next call.
    func refused(_ token: AccessToken?) async {
        guard case .account(let tokens) = identity, let token else { return }
        // The answer's soft_logout is not read here; "soft" keeps the session's device for a login again.
        _ = try? await tokens.renewed(after: TokenRejection(token: token, softLogout: true))
    }

    /// The query parameter an upload as `user` needs: the application service names its ghost; the account is itself.
    func actingAs(_ user: UserID) -> String {
        if case .appService = identity { return "&user_id=" + PercentEncoding.encode(user.rawValue) }
        return ""
    }
}

/// A count of transfers in progress with an upper bound. Thread-safe.
final class TransferSlots: Sendable {
    private let limit: Int
    private let inUse = Mutex(0)

    init(limit: Int) { self.limit = max(1, limit) }

    /// Takes a slot if one is free.
    func tryAcquire() -> Bool {
        inUse.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    func release() { inUse.withLock { $0 = max(0, $0 - 1) } }
}
