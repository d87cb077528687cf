/// The `file` of a media message in an encrypted room, in place of `url` (spec v1.11 §11.12.4.5, "Sending encrypted
/// attachments"): where the ciphertext is, and the secrets to read it — a JSON Web Key (`kty` `oct`, `alg` `A256CTR`,
/// `k` in unpadded base64url), the counter block `iv` and `hashes.sha256` (unpadded base64). Pure value, `Codable`
/// both ways; the bytes are decoded and every field checked by the caller (this module does no cryptography). Every
/// field is optional here, so that a malformed `file` leaves the rest of its message readable (it then goes as text).
public struct EncryptedFile: Sendable, Equatable, Codable {
    /// `url`: the `mxc://` URI of the ciphertext.
    public var url: String?
    public var key: WebKey?
    /// `iv`, unpadded base64.
    public var iv: String?
    /// `hashes`: algorithm → hash of the ciphertext, unpadded base64; `sha256` is the one the spec requires.
    public var hashes: [String: String]?
    /// `v`: `v2` (v1 files used a 128-bit counter that wraps: refused).
    public var version: String?

    /// The version this bridge reads and writes.
    public static let currentVersion = "v2"
    /// The hash the spec requires in `hashes`.
    public static let sha256 = "sha256"

    public init(url: String, key: WebKey, iv: String, hashes: [String: String], version: String = Self.currentVersion) {
        self.url = url
        self.key = key
        self.iv = iv
        self.hashes = hashes
        self.version = version
    }

    /// The JSON Web Key of an encrypted file (RFC 7517).
    public struct WebKey: Sendable, Equatable, Codable {
        /// `kty`: `oct`.
        public var keyType: String?
        /// `key_ops`: must include `encrypt` and `decrypt`.
        public var operations: [String]?
        /// `alg`: `A256CTR`.
        public var algorithm: String?
        /// `k`: the key, unpadded base64url.
        public var key: String?
        /// `ext`: true.
        public var extractable: Bool?

        public static let octetKeyType = "oct"
        public static let aesCTR = "A256CTR"

        /// An AES-256-CTR key, `k` as given.
        public init(aesCTR key: String) {
            keyType = Self.octetKeyType
            operations = [Self.encryptOperation, Self.decryptOperation]
            algorithm = Self.aesCTR
            self.key = key
            extractable = true
        }

        /// Whether this is the key the spec describes (anything else is refused rather than guessed at).
        public var isAESCTR: Bool { keyType == Self.octetKeyType && algorithm == Self.aesCTR && operations?.contains(Self.decryptOperation) == true }

        public static let encryptOperation = "encrypt"
        public static let decryptOperation = "decrypt"

        enum CodingKeys: String, CodingKey {
            case keyType = "kty"
            case operations = "key_ops"
            case algorithm = "alg"
            case key = "k"
            case extractable = "ext"
        }
    }

    enum CodingKeys: String, CodingKey {
        case url, key, iv, hashes
        case version = "v"
    }
}
