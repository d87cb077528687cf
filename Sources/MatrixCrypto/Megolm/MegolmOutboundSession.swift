/// The sending side of a Megolm session (Megolm spec; libolm `outbound_group_session.c`, vodozemac `GroupSession`):
/// a ratchet that moves one step per message and an Ed25519 key that signs every message. Its `sessionKey` is what
/// `m.room_key` shares. Not thread-safe: a class so that a session is never copied (a copy would encrypt two messages
/// at one index with the same keys); its owner (an actor) serializes the calls. No I/O.
public final class MegolmOutboundSession {
    /// The ratchet at the index of the next message.
    private(set) var ratchet: MegolmRatchet
    /// The key that signs messages; its public half is the session id.
    let signingKey: Ed25519SecretKey

    /// A new session: random ratchet at index 0 and a random signing key.
    public convenience init() {
        self.init(ratchet: .random(), signingKey: Ed25519SecretKey())
    }

    init(ratchet: MegolmRatchet, signingKey: Ed25519SecretKey) {
        self.ratchet = ratchet
        self.signingKey = signingKey
    }

    /// The session id: the unpadded base64 of the signing key's public half.
    public var sessionID: String { signingKey.publicKey.base64 }

    /// The index the next message will have (also the number of messages sent, unless the session was restored).
    public var messageIndex: UInt32 { ratchet.index }

    /// The signed key that lets a recipient decrypt this session's messages from the current index on.
    public var sessionKey: MegolmSessionKey { MegolmSessionKey(ratchet: ratchet, signingKey: signingKey) }

    /// Encrypts and signs `plaintext` at the current index, then advances the ratchet.
    public func encrypt(_ plaintext: [UInt8]) -> MegolmMessage {
        let message = MegolmMessage.encrypt(plaintext, ratchet: ratchet, signingKey: signingKey)
        ratchet.advance()
        return message
    }
}
