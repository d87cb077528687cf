/// Pickling a `MegolmOutboundSession` (Isthmus's own format, version 1, sealed by a `PickleKey`).
extension MegolmOutboundSession {
    static let pickleKind = "megolm-outbound-session"
    private static let pickleVersion: UInt8 = 1

    /// The session sealed under `key`, to store; restore it with `init(pickle:key:)`.
    public func pickle(with key: PickleKey) -> [UInt8] {
        var writer = PickleWriter()
        writer.byte(Self.pickleVersion)
        writer.megolmRatchet(ratchet)
        writer.data(signingKey.seed)
        return key.seal(writer.bytes, kind: Self.pickleKind)
    }

    /// Restores a session from `pickle(with:)`: `pickleNotAuthentic` under a wrong key or for altered bytes.
    public convenience init(pickle: [UInt8], key: PickleKey) throws {
        var reader = PickleReader(try key.open(pickle, kind: Self.pickleKind), kind: Self.pickleKind)
        let version = try reader.byte()
        guard version == Self.pickleVersion else { throw MatrixCryptoError.unsupportedVersion(kind: Self.pickleKind, version: version) }
        let ratchet = try reader.megolmRatchet()
        let signingKey = try Ed25519SecretKey(seed: reader.data(length: 32))
        try reader.finish()
        self.init(ratchet: ratchet, signingKey: signingKey)
    }
}

/// Pickling a `MegolmInboundSession` (Isthmus's own format, version 1, sealed by a `PickleKey`).
extension MegolmInboundSession {
    static let pickleKind = "megolm-inbound-session"
    private static let pickleVersion: UInt8 = 1

    /// The session sealed under `key`, to store; restore it with `init(pickle:key:)`.
    public func pickle(with key: PickleKey) -> [UInt8] {
        var writer = PickleWriter()
        writer.byte(Self.pickleVersion)
        writer.megolmRatchet(initialRatchet)
        writer.megolmRatchet(latestRatchet)
        writer.data(signingKey.bytes)
        writer.bool(isSigningKeyVerified)
        return key.seal(writer.bytes, kind: Self.pickleKind)
    }

    /// Restores a session from `pickle(with:)`: `pickleNotAuthentic` under a wrong key or for altered bytes.
    public convenience init(pickle: [UInt8], key: PickleKey) throws {
        var reader = PickleReader(try key.open(pickle, kind: Self.pickleKind), kind: Self.pickleKind)
        let version = try reader.byte()
        guard version == Self.pickleVersion else { throw MatrixCryptoError.unsupportedVersion(kind: Self.pickleKind, version: version) }
        let initial = try reader.megolmRatchet(), latest = try reader.megolmRatchet()
        let signingKey = try Ed25519PublicKey(bytes: reader.data(length: 32))
        let verified = try reader.bool()
        try reader.finish()
        self.init(initial: initial, latest: latest, signingKey: signingKey, verified: verified)
    }
}

extension PickleWriter {
    mutating func megolmRatchet(_ ratchet: MegolmRatchet) {
        data(ratchet.data)
        uint32(ratchet.index)
    }
}

extension PickleReader {
    mutating func megolmRatchet() throws -> MegolmRatchet {
        let data = try data(length: MegolmRatchet.length)
        return try MegolmRatchet(data: data, index: uint32())
    }
}
