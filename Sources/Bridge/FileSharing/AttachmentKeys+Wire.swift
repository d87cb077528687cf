import FoundationEssentials
import IsthmusCommon
import Matrix
import MatrixCrypto

/// Encrypted attachments on the wire (spec §11.12.4.5): an ``EncryptedFile``'s base64 fields to and from the bytes
/// ``AttachmentCipher`` works with, and the secret a media link carries.
extension AttachmentKeys {
    /// The secrets of `file`; nil unless it is a `v2` AES-256-CTR file with a 32-byte key, a 16-byte IV and a SHA-256.
    init?(_ file: EncryptedFile) {
        guard file.version == EncryptedFile.currentVersion, let webKey = file.key, webKey.isAESCTR,
              let hash = file.hashes?[EncryptedFile.sha256], let k = webKey.key, let ivText = file.iv,
              let key = Self.decode(k, url: true), let iv = Self.decode(ivText, url: false),
              let sha256 = Self.decode(hash, url: false) else { return nil }
        self.init(key: key, iv: iv, sha256: sha256)
        guard isWellFormed else { return nil }
    }

    /// The `file` of a message whose ciphertext is at `mxc`.
    func file(at mxc: MXCURI) -> EncryptedFile {
        let k = UnpaddedBase64.encode(key).replacing("+", with: "-").replacing("/", with: "_")
        return EncryptedFile(url: mxc.description, key: EncryptedFile.WebKey(aesCTR: k), iv: UnpaddedBase64.encode(iv),
                             hashes: [EncryptedFile.sha256: UnpaddedBase64.encode(sha256)])
    }

    /// What a media link carries to open the file: the key, the IV and the hash, one after the other.
    var linkSecret: [UInt8] { key + iv + sha256 }

    /// The secrets a media link carried; nil when it is not a key, an IV and a hash of the right lengths.
    init?(linkSecret bytes: [UInt8]) {
        let (keyEnd, ivEnd) = (Self.keyLength, Self.keyLength + Self.ivLength)
        guard bytes.count == ivEnd + Self.hashLength else { return nil }
        self.init(key: Array(bytes[0..<keyEnd]), iv: Array(bytes[keyEnd..<ivEnd]), sha256: Array(bytes[ivEnd...]))
    }

    /// Unpadded (or padded) base64; `url`: the URL-safe alphabet is accepted too (a JWK's `k` uses it; some clients
    /// write the standard one there).
    private static func decode(_ text: String, url: Bool) -> [UInt8]? {
        let standard = url ? text.replacing("-", with: "+").replacing("_", with: "/") : text
        return try? UnpaddedBase64.decode(standard)
    }
}
