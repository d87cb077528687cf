import IsthmusCommon

/// `info` of a media message or room avatar (spec §11.2.1 "m.image" etc.). Pure value; every field optional.
public struct MediaInfo: Sendable, Equatable, Codable {
    /// `mimetype`.
    public var mimeType: String?
    /// `size` in bytes.
    public var size: Int64?
    /// `w`, `h` in pixels (images, videos).
    public var width: Int64?
    public var height: Int64?
    /// `duration` in milliseconds (audio, video).
    public var duration: Int64?
    /// `thumbnail_url` — an `mxc://` URI.
    public var thumbnailURL: String?

    public init(mimeType: String? = nil, size: Int64? = nil, width: Int64? = nil, height: Int64? = nil,
                duration: Int64? = nil, thumbnailURL: String? = nil) {
        self.mimeType = mimeType
        self.size = size
        self.width = width
        self.height = height
        self.duration = duration
        self.thumbnailURL = thumbnailURL
    }

    enum CodingKeys: String, CodingKey {
        case mimeType = "mimetype"
        case size
        case width = "w"
        case height = "h"
        case duration
        case thumbnailURL = "thumbnail_url"
    }

    /// Decodes leniently: a number sent as a float or a string (seen from some clients) is read, anything else is nil.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mimeType = try? container.decodeIfPresent(String.self, forKey: .mimeType)
        size = LenientInteger.decode(container, .size)
        width = LenientInteger.decode(container, .width)
        height = LenientInteger.decode(container, .height)
        duration = LenientInteger.decode(container, .duration)
        thumbnailURL = try? container.decodeIfPresent(String.self, forKey: .thumbnailURL)
    }
}

/// Reads integers that clients sometimes send as floats or strings (old power levels, media sizes). Pure.
enum LenientInteger {
    static func decode<K: CodingKey>(_ container: KeyedDecodingContainer<K>, _ key: K) -> Int64? {
        if let value = try? container.decodeIfPresent(Int64.self, forKey: key) { return value }
        if let value = try? container.decodeIfPresent(Double.self, forKey: key), value.isFinite,
           value.magnitude < 9.0e15 { return Int64(value) }
        if let text = try? container.decodeIfPresent(String.self, forKey: key) { return Int64(text) }
        return nil
    }
}
