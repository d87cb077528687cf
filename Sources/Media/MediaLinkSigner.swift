import FoundationEssentials
import IsthmusCommon

/// Makes and checks the bridge's media URLs, `<public base>/<id>/<signature>/<filename>` (RICH.md §6), where `id`
/// is the `mxc://` reference in base64url, `signature` an HMAC-SHA-256 (truncated to 128 bits, hex) over the
/// reference and the file name under a secret the bridge keeps in its store, and `filename` the sanitized name
/// (kept last, with its extension, so XMPP clients such as Conversations inline it). Pure.
///
/// The link of an encrypted Matrix file carries what opens it: `id` is `<reference>.<secret>`, both base64url, and
/// the signature covers the secret too. Whoever holds the link can fetch the file through the bridge anyway; the secret
/// also opens the homeserver's copy, for someone who can download it there (authenticated media: a Matrix account on
/// that server), and the link outlives the bridge in XMPP archives and logs — as the file's cleartext would. It spares
/// the bridge a table of keys that would have to outlive every link.
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

    /// What a link stands for.
    public struct Link: Sendable, Equatable {
        public var reference: MXCURI
        public var fileName: String
        /// What opens an encrypted file (opaque here); nil for a file stored in the clear.
        public var secret: [UInt8]?
    }

    /// The public URL of `reference` under the (sanitized) `fileName`; `secret`: what opens it, for an encrypted file.
    public func url(for reference: MXCURI, fileName: String, secret: [UInt8]? = nil) -> String {
        let name = Self.sanitizedFileName(fileName)
        var id = Self.encodeID(reference)
        if let secret { id += "." + Self.base64URL(Data(secret)) }
        return "\(publicBase)/\(id)/\(signature(reference, name, secret))/\(name)"
    }

    /// The reference and file name a request's path segments (`id`, `signature`, `filename`, as received) stand for,
    /// or nil when they are malformed or the signature is wrong (the caller answers 404 either way).
    public func verify(id: String, signature given: String, fileName: String) -> (MXCURI, String)? {
        guard let link = verifiedLink(id: id, signature: given, fileName: fileName), link.secret == nil else { return nil }
        return (link.reference, link.fileName)
    }

    /// What a request's path segments stand for, an encrypted file's secret included; nil when they are malformed or
    /// the signature is wrong.
    public func verifiedLink(id: String, signature given: String, fileName: String) -> Link? {
        let parts = id.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let reference = Self.decodeID(String(parts[0])), fileName == Self.sanitizedFileName(fileName) else { return nil }
        var secret: [UInt8]?
        if parts.count == 2 {
            guard parts[1].utf8.count <= Self.maximumSecretCharacters, let bytes = Self.decodeBase64URL(String(parts[1])), !bytes.isEmpty
            else { return nil }
            secret = Array(bytes)
        }
        guard Digest.constantTimeEqual(signature(reference, fileName, secret), given) else { return nil }
        return Link(reference: reference, fileName: fileName, secret: secret)
    }

    private func signature(_ reference: MXCURI, _ fileName: String, _ secret: [UInt8]?) -> String {
        var message = Array("isthmus-media-v1\u{0}\(reference.server)\u{0}\(reference.mediaID)\u{0}\(fileName)".utf8)
        if let secret { message += Array("\u{0}encrypted\u{0}".utf8) + secret }
        return Digest.hex(Digest.hmacSHA256(key: key, message: message).prefix(16))
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

    /// The longest secret part of an `id` read (256 bytes in base64url); an encrypted file's is 107 characters.
    static let maximumSecretCharacters = 344

    static func encodeID(_ reference: MXCURI) -> String {
        base64URL(Data("\(reference.server)/\(reference.mediaID)".utf8))
    }

    static func decodeID(_ id: String) -> MXCURI? {
        guard id.utf8.count <= 700, let data = decodeBase64URL(id), let decoded = String(data: data, encoding: .utf8) else { return nil }
        return MXCURI(mxc: "mxc://" + decoded)
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }

    static func decodeBase64URL(_ text: String) -> Data? {
        var text = text.replacing("-", with: "+").replacing("_", with: "/")
        while text.utf8.count % 4 != 0 { text.append("=") }
        return Data(base64Encoded: text)
    }
}
