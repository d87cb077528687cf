/// A piece of Matrix content, `mxc://<server>/<mediaID>` (spec §11.7 "Content repository"), as every seam carries it
/// (events, the store, the Matrix calls, media): parsed once where a string comes in. Validated at init:
/// both parts non-empty, the media id of `[A-Za-z0-9_-]` as the spec requires, the server name without `/`.
/// Pure value.
public struct MXCURI: Sendable, Hashable, LosslessStringConvertible, Codable {
    public let server: String
    public let mediaID: String

    public init?(server: String, mediaID: String) {
        guard !server.isEmpty, server.utf8.count <= 255, !server.contains("/"), server.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 }),
              !mediaID.isEmpty, mediaID.utf8.count <= 255,
              mediaID.unicodeScalars.allSatisfy({ Self.mediaIDCharacters.contains($0) }) else { return nil }
        self.server = server
        self.mediaID = mediaID
    }

    /// Parses `mxc://server/mediaID`; nil for anything else.
    public init?(mxc: String) {
        guard mxc.hasPrefix("mxc://") else { return nil }
        let rest = mxc.dropFirst(6)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        self.init(server: String(rest[..<slash]), mediaID: String(rest[rest.index(after: slash)...]))
    }

    /// Parses `mxc://server/mediaID` (``init(mxc:)``).
    public init?(_ description: String) {
        self.init(mxc: description)
    }

    /// Decodes from its text form; anything that is not a valid `mxc://` URI is a decoding error.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let parsed = MXCURI(mxc: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not an mxc:// URI"))
        }
        self = parsed
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// `mxc://server/mediaID`.
    public var description: String { "mxc://\(server)/\(mediaID)" }

    private static let mediaIDCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-".unicodeScalars)
}
