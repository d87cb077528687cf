/// Olm's double ratchet (Olm spec, "The Olm Algorithm"; libolm `ratchet.cpp`): a root key; one sender chain (our
/// current ratchet key and its chain key); the receiver chains of the peer's last ratchet keys; and the message keys
/// of messages skipped within a chain. Pure value; every decryption works on a copy and is kept only if it succeeds,
/// so a forged or corrupt message never changes the state.
struct OlmRatchet: Sendable, Equatable {
    /// Receiver chains kept (libolm's and vodozemac's limit): older ones are dropped with their keys.
    static let maxReceiverChains = 5
    /// Skipped message keys kept, oldest dropped first (libolm's and vodozemac's limit).
    static let maxSkippedKeys = 40
    /// How far ahead of its chain a message may be (libolm's `MAX_MESSAGE_GAP`, vodozemac's `MAX_MESSAGE_GAP`).
    static let maxMessageGap = 2000

    private static let rootInfo = Array("OLM_ROOT".utf8)
    private static let ratchetInfo = Array("OLM_RATCHET".utf8)

    /// A chain key and the index of the message it encrypts next: the message key is HMAC(C, 0x01), the next chain
    /// key HMAC(C, 0x02).
    struct ChainKey: Sendable, Equatable {
        var key: [UInt8]
        var index: UInt32

        var messageKey: [UInt8] { CryptoPrimitives.hmacSHA256(key: key, message: [1]) }

        mutating func advance() {
            key = CryptoPrimitives.hmacSHA256(key: key, message: [2])
            index += 1
        }
    }

    /// Our current ratchet key pair and its chain.
    struct SenderChain: Sendable, Equatable {
        var ratchetKey: Curve25519SecretKey
        var chainKey: ChainKey
    }

    /// A ratchet key of the peer and its chain.
    struct ReceiverChain: Sendable, Equatable {
        var ratchetKey: Curve25519PublicKey
        var chainKey: ChainKey
    }

    /// The key of a message skipped in a receiver chain, kept until it arrives.
    struct SkippedKey: Sendable, Equatable {
        var ratchetKey: Curve25519PublicKey
        var index: UInt32
        var messageKey: [UInt8]
    }

    var rootKey: [UInt8]
    /// Nil after a new receiver chain: the next encryption starts a new sender chain with a fresh ratchet key.
    var senderChain: SenderChain?
    /// Newest first.
    var receiverChains: [ReceiverChain]
    /// Oldest first.
    var skippedKeys: [SkippedKey]

    /// The initiator's ratchet: R0 ‖ C0 = HKDF(S, "OLM_ROOT"), with C0 the chain of our first ratchet key.
    static func initiator(sharedSecret: [UInt8], ratchetKey: Curve25519SecretKey) -> OlmRatchet {
        let derived = CryptoPrimitives.hkdfSHA256(inputKey: sharedSecret, salt: [], info: rootInfo, length: 64)
        return OlmRatchet(rootKey: Array(derived[0..<32]),
                          senderChain: SenderChain(ratchetKey: ratchetKey, chainKey: ChainKey(key: Array(derived[32...]), index: 0)),
                          receiverChains: [], skippedKeys: [])
    }

    /// The recipient's ratchet: the same R0 ‖ C0, with C0 the chain of the initiator's first ratchet key.
    static func recipient(sharedSecret: [UInt8], theirRatchetKey: Curve25519PublicKey) -> OlmRatchet {
        let derived = CryptoPrimitives.hkdfSHA256(inputKey: sharedSecret, salt: [], info: rootInfo, length: 64)
        return OlmRatchet(rootKey: Array(derived[0..<32]), senderChain: nil,
                          receiverChains: [ReceiverChain(ratchetKey: theirRatchetKey, chainKey: ChainKey(key: Array(derived[32...]), index: 0))],
                          skippedKeys: [])
    }

    /// Encrypts `plaintext` with the next key of the sender chain, first starting a sender chain with a fresh ratchet
    /// key if there is none: R_i ‖ C_i,0 = HKDF(salt R_i−1, ECDH(our new key, their latest key), "OLM_RATCHET").
    /// Throws only if the peer's ratchet key has low order (the ECDH would be zero).
    mutating func encrypt(_ plaintext: [UInt8]) throws -> OlmNormalMessage {
        if senderChain == nil {
            guard let theirs = receiverChains.first else { preconditionFailure("an Olm ratchet without any chain") }
            let ratchetKey = Curve25519SecretKey()
            let (root, chain) = try Self.advanceRoot(rootKey, ours: ratchetKey, theirs: theirs.ratchetKey)
            rootKey = root
            senderChain = SenderChain(ratchetKey: ratchetKey, chainKey: ChainKey(key: chain, index: 0))
        }
        let chain = senderChain!
        let message = OlmNormalMessage.encrypt(plaintext, messageKey: chain.chainKey.messageKey,
                                               ratchetKey: chain.ratchetKey.publicKey, chainIndex: chain.chainKey.index)
        senderChain!.chainKey.advance()
        return message
    }

    /// Decrypts `message`: with a skipped key if it is behind its chain, by advancing its receiver chain if ahead,
    /// or, for a new ratchet key of the peer, by ratcheting the root key into a new receiver chain (and dropping our
    /// sender chain so the reply uses a new ratchet key). The state changes only if the MAC verifies.
    mutating func decrypt(_ message: OlmNormalMessage) throws -> [UInt8] {
        var next = self
        let plaintext = try next.decryptInPlace(message)
        self = next
        return plaintext
    }

    private mutating func decryptInPlace(_ message: OlmNormalMessage) throws -> [UInt8] {
        if let position = receiverChains.firstIndex(where: { $0.ratchetKey == message.ratchetKey }) {
            if message.chainIndex < receiverChains[position].chainKey.index {
                guard let skipped = skippedKeys.firstIndex(where: {
                    $0.ratchetKey == message.ratchetKey && $0.index == message.chainIndex
                }) else { throw MatrixCryptoError.missingMessageKey(chainIndex: message.chainIndex) }
                let plaintext = try message.decrypt(messageKey: skippedKeys[skipped].messageKey)
                skippedKeys.remove(at: skipped)
                return plaintext
            }
            return try advanceAndDecrypt(chainAt: position, message)
        }
        guard let sender = senderChain else { throw MatrixCryptoError.unexpectedRatchetKey }
        let (root, chain) = try Self.advanceRoot(rootKey, ours: sender.ratchetKey, theirs: message.ratchetKey)
        receiverChains.insert(ReceiverChain(ratchetKey: message.ratchetKey, chainKey: ChainKey(key: chain, index: 0)), at: 0)
        let plaintext = try advanceAndDecrypt(chainAt: 0, message)
        rootKey = root
        if receiverChains.count > Self.maxReceiverChains { receiverChains.removeLast() }
        senderChain = nil
        return plaintext
    }

    /// Moves receiver chain `position` to the message's index, keeping the keys it passes, and decrypts.
    private mutating func advanceAndDecrypt(chainAt position: Int, _ message: OlmNormalMessage) throws -> [UInt8] {
        var chain = receiverChains[position]
        let gap = Int(message.chainIndex) - Int(chain.chainKey.index)
        guard gap <= Self.maxMessageGap else {
            throw MatrixCryptoError.messageGapTooLarge(gap: gap, limit: Self.maxMessageGap)
        }
        while chain.chainKey.index < message.chainIndex {
            skippedKeys.append(SkippedKey(ratchetKey: chain.ratchetKey, index: chain.chainKey.index,
                                          messageKey: chain.chainKey.messageKey))
            chain.chainKey.advance()
        }
        if skippedKeys.count > Self.maxSkippedKeys { skippedKeys.removeFirst(skippedKeys.count - Self.maxSkippedKeys) }
        let plaintext = try message.decrypt(messageKey: chain.chainKey.messageKey)
        chain.chainKey.advance()
        receiverChains[position] = chain
        return plaintext
    }

    /// R_i ‖ C_i,0 = HKDF-SHA-256(salt: R_i−1, input: ECDH(ours, theirs), info: "OLM_RATCHET").
    private static func advanceRoot(_ rootKey: [UInt8], ours: Curve25519SecretKey,
                                    theirs: Curve25519PublicKey) throws -> (root: [UInt8], chain: [UInt8]) {
        let secret = try ours.diffieHellman(with: theirs)
        let derived = CryptoPrimitives.hkdfSHA256(inputKey: secret, salt: rootKey, info: ratchetInfo, length: 64)
        return (Array(derived[0..<32]), Array(derived[32...]))
    }
}
