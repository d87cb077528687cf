import FoundationEssentials
import IsthmusCommon
import Media
import Synchronization

/// What both media directions share: the homeserver and the appservice token (to download and upload as the bot or
/// a ghost), the link signer, and the limits from `media:` in the config. Immutable.
public struct MediaSettings: Sendable {
    public var homeserverURL: URL
    public var asToken: String
    /// CA file for an https homeserver (tests); nil: libcurl's default store.
    public var caFile: String?
    public var signer: MediaLinkSigner
    /// Largest file fetched from an XMPP link; nil: ask the homeserver (`m.upload.size`).
    public var maxSize: Int64?
    public var allowPrivateAddresses: Bool
    public var stallTimeout: Duration
    /// Transfers at once, each way.
    public var maxConcurrentTransfers: Int
    /// `media.xmpp_upload`: Matrix files go to the XMPP server's XEP-0363 service (see ``XMPPUploader``).
    public var xmppUpload = false

    public init(homeserverURL: URL, asToken: String, caFile: String? = nil, signer: MediaLinkSigner, maxSize: Int64? = nil,
                allowPrivateAddresses: Bool = false, stallTimeout: Duration = .seconds(30), maxConcurrentTransfers: Int = 8) {
        self.homeserverURL = homeserverURL
        self.asToken = asToken
        self.caFile = caFile
        self.signer = signer
        self.maxSize = maxSize
        self.allowPrivateAddresses = allowPrivateAddresses
        self.stallTimeout = stallTimeout
        self.maxConcurrentTransfers = maxConcurrentTransfers
    }

    /// The homeserver's base URL without a trailing `/`.
    var homeserverBase: String {
        var base = homeserverURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return base
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
