/// Pickling an `OlmAccount` (Isthmus's own format, version 1, sealed by a `PickleKey`).
extension OlmAccount {
    static let pickleKind = "olm-account"
    private static let pickleVersion: UInt8 = 1

    /// The account sealed under `key`, to store; restore it with `init(pickle:key:)`.
    public func pickle(with key: PickleKey) -> [UInt8] {
        var writer = PickleWriter()
        writer.byte(Self.pickleVersion)
        writer.data(identityKey.bytes)
        writer.data(signingKey.seed)
        writer.uint64(nextKeyID)
        writer.array(oneTimeKeys, Self.write)
        writer.optional(fallbackKey, Self.write)
        writer.optional(previousFallbackKey, Self.write)
        return key.seal(writer.bytes, kind: Self.pickleKind)
    }

    /// Restores an account from `pickle(with:)`: `pickleNotAuthentic` under a wrong key or for altered bytes.
    public convenience init(pickle: [UInt8], key: PickleKey) throws {
        var reader = PickleReader(try key.open(pickle, kind: Self.pickleKind), kind: Self.pickleKind)
        let version = try reader.byte()
        guard version == Self.pickleVersion else { throw MatrixCryptoError.unsupportedVersion(kind: Self.pickleKind, version: version) }
        let identityKey = try Curve25519SecretKey(bytes: reader.data(length: 32))
        let signingKey = try Ed25519SecretKey(seed: reader.data(length: 32))
        let nextKeyID = try reader.uint64()
        let oneTimeKeys = try reader.array(limit: Self.maxOneTimeKeys, Self.read)
        let fallbackKey = try reader.optional(Self.read)
        let previousFallbackKey = try reader.optional(Self.read)
        try reader.finish()
        self.init(identityKey: identityKey, signingKey: signingKey, oneTimeKeys: oneTimeKeys, fallbackKey: fallbackKey,
                  previousFallbackKey: previousFallbackKey, nextKeyID: nextKeyID)
    }

    private static func write(_ writer: inout PickleWriter, _ key: OneTimeKey) {
        writer.uint64(key.id)
        writer.data(key.key.bytes)
        writer.bool(key.published)
    }

    private static func read(_ reader: inout PickleReader) throws -> OneTimeKey {
        OneTimeKey(id: try reader.uint64(), key: try Curve25519SecretKey(bytes: reader.data(length: 32)), published: try reader.bool())
    }
}
