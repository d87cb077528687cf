/// What kind of attachment a file is, by its media type: which Matrix msgtype carries it (`m.image`, `m.video`,
/// `m.audio`, else `m.file`). Plus the media type a file name suggests when a server sends none. Pure.
public enum MediaKind: String, Sendable, Equatable {
    case image = "m.image"
    case video = "m.video"
    case audio = "m.audio"
    case file = "m.file"

    /// The kind of `mediaType` (`image/png; charset=…` → image). SVG is a file: it is a document that may carry
    /// scripts, and Matrix clients do not inline it.
    public init(mediaType: String?) {
        let essence = Self.essence(mediaType)
        if essence == "image/svg+xml" { self = .file; return }
        if essence.hasPrefix("image/") { self = .image }
        else if essence.hasPrefix("video/") { self = .video }
        else if essence.hasPrefix("audio/") { self = .audio }
        else { self = .file }
    }

    /// `type/subtype` in lower case, without parameters; empty for nil.
    public static func essence(_ mediaType: String?) -> String {
        guard let mediaType else { return "" }
        let main = mediaType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return main.trimmingWhitespace().lowercased()
    }

    /// The media type a file name's extension suggests (common formats only), or nil.
    public static func mediaType(forFileName name: String) -> String? {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        return byExtension[name[name.index(after: dot)...].lowercased()]
    }

    /// The usual extension of `mediaType` (without the dot), or nil.
    public static func fileExtension(forMediaType mediaType: String?) -> String? {
        let essence = essence(mediaType)
        return preferredExtension[essence] ?? byExtension.first { $0.value == essence }?.key
    }

    private static let preferredExtension = ["image/jpeg": "jpg", "audio/ogg": "ogg", "audio/mp4": "m4a"]

    private static let byExtension: [String: String] = [
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
        "heic": "image/heic", "avif": "image/avif", "svg": "image/svg+xml",
        "mp4": "video/mp4", "webm": "video/webm", "mov": "video/quicktime", "mkv": "video/x-matroska",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "ogg": "audio/ogg", "oga": "audio/ogg", "opus": "audio/ogg", "wav": "audio/wav",
        "txt": "text/plain", "pdf": "application/pdf", "zip": "application/zip",
    ]
}
