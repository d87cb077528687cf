import FoundationEssentials
import IsthmusCommon

extension Config {
    /// `media:` — files, images, voice and video both ways (RICH.md §6).
    public struct Media: Sendable, Equatable {
        /// The public base of the bridge's media links handed to XMPP clients (`public_url`); nil: `appservice.url`
        /// + `/media`. The listener serves them under `/media/…`: a reverse proxy maps this base there.
        public var publicURL: String?
        /// Largest file fetched from an XMPP user's link (`max_size`, bytes); nil: the homeserver's `m.upload.size`.
        public var maxSize: Int64?
        /// Whether links to loopback, private and other special addresses may be fetched (`allow_private_addresses`;
        /// off: the bridge is no SSRF proxy into the operator's network).
        public var allowPrivateAddresses = false
        /// Transfers at once, each way (`max_concurrent_transfers`); more wait (links) or get 503 (media route).
        public var maxConcurrentTransfers = 8
        /// A transfer that moves nothing for this long is abandoned (`stall_timeout_seconds`).
        public var stallTimeout: Duration = .seconds(30)
        /// Re-upload Matrix files to the XMPP server's XEP-0363 service and send that link instead of the bridge's
        /// (`xmpp_upload`); the bridge's link stays the fallback.
        public var xmppUpload = false

        public init() {}

        /// The media links' base for an appservice listening at `appserviceURL`.
        public func publicBase(appserviceURL: URL) -> String {
            if let publicURL { return publicURL }
            var base = appserviceURL.absoluteString
            while base.hasSuffix("/") { base.removeLast() }
            return base + "/media"
        }
    }

    /// `media:` — `public_url`, `max_size`, `allow_private_addresses`, `max_concurrent_transfers`, `stall_timeout_seconds`,
    /// `xmpp_upload`.
    static func decodeMedia(_ reader: inout ConfigReader) throws(ConfigError) -> Media {
        var media = Media()
        if let text = try reader.optionalString("public_url") {
            guard httpURL(text) != nil else { throw reader.invalid("public_url", "expected an http:// or https:// URL, got '\(text)'") }
            media.publicURL = text
        }
        if let size = try reader.optionalInt("max_size") {
            guard size > 0 else { throw reader.invalid("max_size", "must be positive (bytes)") }
            media.maxSize = Int64(size)
        }
        media.allowPrivateAddresses = try reader.optionalBool("allow_private_addresses") ?? false
        if let count = try reader.optionalInt("max_concurrent_transfers") {
            guard count > 0, count <= 1024 else { throw reader.invalid("max_concurrent_transfers", "must be between 1 and 1024") }
            media.maxConcurrentTransfers = count
        }
        if let seconds = try reader.optionalInt("stall_timeout_seconds") {
            guard seconds > 0 else { throw reader.invalid("stall_timeout_seconds", "must be positive") }
            media.stallTimeout = .seconds(seconds)
        }
        media.xmppUpload = try reader.optionalBool("xmpp_upload") ?? false
        return media
    }
}
