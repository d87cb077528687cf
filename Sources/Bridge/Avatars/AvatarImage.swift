import IsthmusCommon
import IsthmusStore
import XMPPComponent

/// An avatar image checked for use on the other side (RICH.md §8): an image (PNG, JPEG, GIF or WebP, told by its
/// first bytes, whatever the sender's `TYPE` says), at most the size limit, and — for an XMPP avatar — the image its
/// presence announced (the SHA-1 matches). Pure.
enum AvatarImage {
    /// Why an image is refused.
    enum Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        case tooLarge(Int, limit: Int)
        case notAnImage
        case hashMismatch(announced: String, actual: String)
        case invalidEncoding

        var description: String {
            switch self {
            case .tooLarge(let size, let limit): "too large (\(size) bytes, the limit is \(limit))"
            case .notAnImage: "not a PNG, JPEG, GIF or WebP image"
            case .hashMismatch(let announced, let actual): "SHA-1 \(actual) differs from the announced \(announced)"
            case .invalidEncoding: "BINVAL is not base64"
            }
        }
    }

    /// The avatar limit when the config does not set one: 1 MiB (XEP-0153 recommends far less, 8 KiB; clients send more).
    static let defaultLimit = 1 << 20
    /// The largest image a puppet's vCard carries (a larger Matrix avatar goes as a 96×96 thumbnail): 64 KiB.
    static let defaultVCardLimit = 64 << 10

    /// The SHA-1 of `bytes` as XEP-0153 writes it (lower-case hex).
    static func sha1(_ bytes: [UInt8]) -> String { Digest.hex(Digest.sha1(bytes)) }

    /// The media type `bytes` start like, or nil when they are none of the image formats avatars use.
    static func mediaType(of bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) { return "image/png" }
        if bytes.starts(with: [0xff, 0xd8, 0xff]) { return "image/jpeg" }
        if bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)) { return "image/gif" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) { return "image/webp" }
        return nil
    }

    /// Checks an image; `announced`: the SHA-1 it must have (XMPP → Matrix), nil when any will do (Matrix → XMPP).
    static func check(_ bytes: [UInt8], announced: String?, limit: Int) -> Result<StoredAvatar, Refusal> {
        guard bytes.count <= limit else { return .failure(.tooLarge(bytes.count, limit: limit)) }
        guard let type = mediaType(of: bytes) else { return .failure(.notAnImage) }
        let hash = sha1(bytes)
        if let announced, announced != hash { return .failure(.hashMismatch(announced: announced, actual: hash)) }
        return .success(StoredAvatar(sha1: hash, mediaType: type, data: bytes))
    }

    /// Reads and checks the photo of a vCard an occupant's presence announced as `announced`. nil: the vCard has no photo.
    static func fromVCard(_ vCard: XElement, announced: String, limit: Int) -> Result<StoredAvatar, Refusal>? {
        // Base64 is 4/3 of the bytes, plus line breaks: refuse before decoding what cannot fit.
        let photo: VCardPhoto?
        do {
            photo = try VCardPhoto.read(vCard, maxEncodedLength: limit / 3 * 4 + limit / 16 + 16)
        } catch .tooLarge(let length) {
            return .failure(.tooLarge(length / 4 * 3, limit: limit))
        } catch {
            return .failure(.invalidEncoding)
        }
        guard let photo else { return nil }
        return check(photo.data, announced: announced, limit: limit)
    }
}
