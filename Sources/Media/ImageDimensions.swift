/// Width and height of a PNG, GIF or JPEG read from its first bytes (for Matrix's `info.w`/`info.h`), without
/// decoding the image. Pure; nil when the format is another or the header is cut short.
///
/// Hand-written rather than pulling in an image library: three fixed headers, and the bridge only needs the size.
public enum ImageDimensions {
    /// How many leading bytes are enough for the formats read here (JPEG's SOF may follow EXIF data).
    public static let prefixLength = 256 << 10

    public static func read(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        if bytes.starts(with: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), bytes.count >= 24,
           bytes[12..<16] == [0x49, 0x48, 0x44, 0x52][...] {  // IHDR first (PNG §11.2.2)
            return (big32(bytes, 16), big32(bytes, 20))
        }
        if bytes.starts(with: Array("GIF8".utf8)), bytes.count >= 10 {
            return (Int(bytes[6]) | Int(bytes[7]) << 8, Int(bytes[8]) | Int(bytes[9]) << 8)
        }
        if bytes.starts(with: [0xff, 0xd8]) { return jpeg(bytes) }
        return nil
    }

    /// Walks JPEG segments to the first start-of-frame (SOF0–SOF15 except DHT 0xC4, JPG 0xC8, DAC 0xCC).
    private static func jpeg(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        var index = 2
        while index + 9 < bytes.count {
            guard bytes[index] == 0xff else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xff { index += 1; continue }
            if marker == 0xd8 || (0xd0...0xd7).contains(marker) || marker == 0x01 { index += 2; continue }
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2 else { return nil }
            if (0xc0...0xcf).contains(marker), ![0xc4, 0xc8, 0xcc].contains(marker) {
                let height = Int(bytes[index + 5]) << 8 | Int(bytes[index + 6])
                let width = Int(bytes[index + 7]) << 8 | Int(bytes[index + 8])
                return (width, height)
            }
            index += 2 + length
        }
        return nil
    }

    private static func big32(_ bytes: [UInt8], _ at: Int) -> Int {
        Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
    }
}
