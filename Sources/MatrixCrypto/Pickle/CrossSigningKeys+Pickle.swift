/// Pickling `CrossSigningKeys` (Isthmus's own format, version 1, sealed by a `PickleKey`): the three seeds.
extension CrossSigningKeys {
    static let pickleKind = "cross-signing-keys"
    private static let pickleVersion: UInt8 = 1

    /// The keys sealed under `key`, to store; restore them with `init(pickle:key:)`.
    public func pickle(with key: PickleKey) -> [UInt8] {
        var writer = PickleWriter()
        writer.byte(Self.pickleVersion)
        writer.data(master.seed)
        writer.data(selfSigning.seed)
        writer.data(userSigning.seed)
        return key.seal(writer.bytes, kind: Self.pickleKind)
    }

    /// Restores keys from `pickle(with:)`: `pickleNotAuthentic` under a wrong key or for altered bytes.
    public init(pickle: [UInt8], key: PickleKey) throws {
        var reader = PickleReader(try key.open(pickle, kind: Self.pickleKind), kind: Self.pickleKind)
        let version = try reader.byte()
        guard version == Self.pickleVersion else { throw MatrixCryptoError.unsupportedVersion(kind: Self.pickleKind, version: version) }
        let master = try Ed25519SecretKey(seed: reader.data(length: 32))
        let selfSigning = try Ed25519SecretKey(seed: reader.data(length: 32))
        let userSigning = try Ed25519SecretKey(seed: reader.data(length: 32))
        try reader.finish()
        self.init(master: master, selfSigning: selfSigning, userSigning: userSigning)
    }
}
