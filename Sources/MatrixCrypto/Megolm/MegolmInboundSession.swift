/// The receiving side of a Megolm session (Megolm spec; libolm `inbound_group_session.c`, vodozemac
/// `InboundGroupSession`). It keeps the ratchet at the first index it knows (to decrypt any later message, in any
/// order) and the latest ratchet it reached (so the next message needs few hashes). Not thread-safe: its owner (an
/// actor) serializes the calls. No I/O.
public final class MegolmInboundSession {
    /// The result of a decryption.
    public struct Decrypted: Sendable, Equatable {
        /// The plaintext (for Matrix, the JSON of the event).
        public var plaintext: [UInt8]
        /// The message's index (to refuse a replay of one index under another event id).
        public var messageIndex: UInt32

        /// A result (to compare with in tests and callers' fakes).
        public init(plaintext: [UInt8], messageIndex: UInt32) {
            self.plaintext = plaintext
            self.messageIndex = messageIndex
        }
    }

    /// The ratchet at the first known index.
    private(set) var initialRatchet: MegolmRatchet
    /// The furthest ratchet reached by decrypting.
    private(set) var latestRatchet: MegolmRatchet
    /// The session's signing key; its base64 is the session id.
    public let signingKey: Ed25519PublicKey
    /// Whether the signing key is known to be the sender's: true for a session key (it is signed by that key) and,
    /// for an exported key, once a message signed by it decrypted (libolm's `is_verified`).
    public private(set) var isSigningKeyVerified: Bool

    /// A session from the `session_key` of `m.room_key` (its signature was checked when it was parsed).
    public convenience init(sessionKey: MegolmSessionKey) {
        self.init(initial: sessionKey.ratchet, latest: sessionKey.ratchet, signingKey: sessionKey.signingKey, verified: true)
    }

    /// A session from an exported key (key export, backup, `m.forwarded_room_key`).
    public convenience init(exportedKey: MegolmExportedSessionKey) {
        self.init(initial: exportedKey.ratchet, latest: exportedKey.ratchet, signingKey: exportedKey.signingKey, verified: false)
    }

    init(initial: MegolmRatchet, latest: MegolmRatchet, signingKey: Ed25519PublicKey, verified: Bool) {
        initialRatchet = initial
        latestRatchet = latest
        self.signingKey = signingKey
        isSigningKeyVerified = verified
    }

    /// The session id: the unpadded base64 of the signing key.
    public var sessionID: String { signingKey.base64 }

    /// The first index this session can decrypt.
    public var firstKnownIndex: UInt32 { initialRatchet.index }

    /// Checks the signature, then the index (`unknownMessageIndex` below the first known), then the MAC, and decrypts.
    /// The session changes only when all checks pass.
    public func decrypt(_ message: MegolmMessage) throws -> Decrypted {
        try signingKey.verify(message.signature, of: message.signedBytes)
        let index = message.messageIndex
        guard index >= initialRatchet.index else {
            throw MatrixCryptoError.unknownMessageIndex(index: index, firstKnown: initialRatchet.index)
        }
        let fromLatest = index >= latestRatchet.index
        var ratchet = fromLatest ? latestRatchet : initialRatchet
        ratchet.advance(to: index)
        let plaintext = try ratchet.cipher.verifyAndDecrypt(message: message.authenticatedBytes, mac: message.mac,
                                                             ciphertext: message.ciphertext)
        if fromLatest { latestRatchet = ratchet }
        isSigningKeyVerified = true
        return Decrypted(plaintext: plaintext, messageIndex: index)
    }

    /// The session exported at `index`, to decrypt from there on; nil when `index` is below the first known index.
    public func export(at index: UInt32) -> MegolmExportedSessionKey? {
        guard index >= initialRatchet.index else { return nil }
        var ratchet = index >= latestRatchet.index ? latestRatchet : initialRatchet
        ratchet.advance(to: index)
        return MegolmExportedSessionKey(ratchet: ratchet, signingKey: signingKey)
    }

    /// The session exported at its first known index.
    public func exportAtFirstKnownIndex() -> MegolmExportedSessionKey {
        MegolmExportedSessionKey(ratchet: initialRatchet, signingKey: signingKey)
    }
}
