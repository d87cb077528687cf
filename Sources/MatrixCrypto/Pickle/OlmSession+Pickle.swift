/// Pickling an `OlmSession` (Isthmus's own format, version 1, sealed by a `PickleKey`).
extension OlmSession {
    static let pickleKind = "olm-session"
    private static let pickleVersion: UInt8 = 1

    /// The session sealed under `key`, to store; restore it with `init(pickle:key:)`.
    public func pickle(with key: PickleKey) -> [UInt8] {
        var writer = PickleWriter()
        writer.byte(Self.pickleVersion)
        writer.data(sessionKeys.identityKey.bytes)
        writer.data(sessionKeys.baseKey.bytes)
        writer.data(sessionKeys.oneTimeKey.bytes)
        writer.data(ratchet.rootKey)
        writer.optional(ratchet.senderChain) { writer, chain in
            writer.data(chain.ratchetKey.bytes)
            Self.write(&writer, chain.chainKey)
        }
        writer.array(ratchet.receiverChains) { writer, chain in
            writer.data(chain.ratchetKey.bytes)
            Self.write(&writer, chain.chainKey)
        }
        writer.array(ratchet.skippedKeys) { writer, skipped in
            writer.data(skipped.ratchetKey.bytes)
            writer.uint32(skipped.index)
            writer.data(skipped.messageKey)
        }
        return key.seal(writer.bytes, kind: Self.pickleKind)
    }

    /// Restores a session from `pickle(with:)`: `pickleNotAuthentic` under a wrong key or for altered bytes.
    public convenience init(pickle: [UInt8], key: PickleKey) throws {
        var reader = PickleReader(try key.open(pickle, kind: Self.pickleKind), kind: Self.pickleKind)
        let version = try reader.byte()
        guard version == Self.pickleVersion else { throw MatrixCryptoError.unsupportedVersion(kind: Self.pickleKind, version: version) }
        let keys = OlmSessionKeys(identityKey: try Curve25519PublicKey(bytes: reader.data(length: 32)),
                                  baseKey: try Curve25519PublicKey(bytes: reader.data(length: 32)),
                                  oneTimeKey: try Curve25519PublicKey(bytes: reader.data(length: 32)))
        let rootKey = try reader.data(length: 32)
        let sender = try reader.optional { reader in
            OlmRatchet.SenderChain(ratchetKey: try Curve25519SecretKey(bytes: reader.data(length: 32)), chainKey: try Self.readChainKey(&reader))
        }
        let receivers = try reader.array(limit: OlmRatchet.maxReceiverChains) { reader in
            OlmRatchet.ReceiverChain(ratchetKey: try Curve25519PublicKey(bytes: reader.data(length: 32)), chainKey: try Self.readChainKey(&reader))
        }
        let skipped = try reader.array(limit: OlmRatchet.maxSkippedKeys) { reader in
            OlmRatchet.SkippedKey(ratchetKey: try Curve25519PublicKey(bytes: reader.data(length: 32)), index: try reader.uint32(),
                                  messageKey: try reader.data(length: 32))
        }
        try reader.finish()
        guard sender != nil || !receivers.isEmpty else {
            throw MatrixCryptoError.malformedPickle(kind: Self.pickleKind, reason: "no chain")
        }
        self.init(sessionKeys: keys, ratchet: OlmRatchet(rootKey: rootKey, senderChain: sender, receiverChains: receivers,
                                                         skippedKeys: skipped))
    }

    private static func write(_ writer: inout PickleWriter, _ chainKey: OlmRatchet.ChainKey) {
        writer.data(chainKey.key)
        writer.uint32(chainKey.index)
    }

    private static func readChainKey(_ reader: inout PickleReader) throws -> OlmRatchet.ChainKey {
        OlmRatchet.ChainKey(key: try reader.data(length: 32), index: try reader.uint32())
    }
}
