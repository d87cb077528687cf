import FoundationEssentials
import IsthmusCommon

/// Makes and checks the bridge's media URLs, `<public base>/<id>/<signature>/<filename>` (RICH.md §6), where `id`
/// is the `mxc://` reference in base64url, `signature` an HMAC-SHA-256 (truncated to 128 bits, hex) over the
/// reference and the file name under a secret the bridge keeps in its store, and `filename` the sanitized name
/// (kept last, with its extension, so XMPP clients such as Conversations inline it). Pure.
public struct MediaLinkSigner: Sendable {
    /// The public base every URL starts with (no trailing `/`), e.g. `https://bridge.example/media`.
    public let publicBase: String
    private let key: [UInt8]

    public init(publicBase: String, secret: String) {
        var base = publicBase
        while base.hasSuffix("/") { base.removeLast() }
        self.publicBase = base
        key = Array(secret.utf8)
    }

    /// The public URL of `reference` under the (sanitized) `fileName`.
    public func url(for reference: MXCURI, fileName: String) -> String {
        let name = Self.sanitizedFileName(fileName)
        return "\(publicBase)/\(Self.encodeID(reference))/\(signature(reference, name))/\(name)"
    }

    /// The reference and file name a request's path segments (`id`, `signature`, `filename`, as received) stand for,
    /// or nil when they are malformed or the signature is wrong (the caller answers 404 either way).
    public func verify(id: String, signature given: String, fileName: String) -> (MXCURI, String)? {
        guard let reference = Self.decodeID(id), fileName == Self.sanitizedFileName(fileName),
              Digest.constantTimeEqual(signature(reference, fileName), given) else { return nil }
        return (reference, fileName)
    }

    private func signature(_ reference: MXCURI, _ fileName: String) -> String {
        let message = "isthmus-media-v1\u{0}\(reference.server)\u{0}\(reference.mediaID)\u{0}\(fileName)"
        return Digest.hex(Digest.hmacSHA256(key: key, message: Array(message.utf8)).prefix(16))
    }

    /// A file name safe in a URL path and in `Content-Disposition`: characters other than `A-Z a-z 0-9 . _ -` become
    /// `_`, no leading dot, at most 100 characters keeping the extension; `file` when nothing is left.
    public static func sanitizedFileName(_ name: String) -> String {
        var scalars = name.unicodeScalars.map { scalar -> Character in
            allowed.contains(scalar) ? Character(scalar) : "_"
        }
        while scalars.first == "." { scalars.removeFirst() }
        if scalars.count > 100 {
            let dot = scalars.lastIndex(of: ".").map { scalars.count - $0 } ?? 0
            let keep = dot > 0 && dot <= 16 ? dot : 0
            scalars = Array(scalars.prefix(100 - keep)) + scalars.suffix(keep)
        }
        return scalars.isEmpty ? "file" : String(scalars)
    }

    private static let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-".unicodeScalars)

    static func encodeID(_ reference: MXCURI) -> String {
        Data("\(reference.server)/\(reference.mediaID)".utf8).base64EncodedString()
            .replacing("+", with: "-").replacing("/", with: "_")
            .replacing("=", with: "")
    }

    static func decodeID(_ id: String) -> MXCURI? {
        guard id.utf8.count <= 700 else { return nil }
        var text = id.replacing("-", with: "+").replacing("_", with: "/")
        while text.utf8.count % 4 != 0 { text.append("=") }
        guard let data = Data(base64Encoded: text), let decoded = String(data: data, encoding: .utf8) else { return nil }
        return MXCURI(mxc: "mxc://" + decoded)
    }
}
