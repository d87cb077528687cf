/// One Olm session between two devices (Olm spec; libolm `session.cpp`, vodozemac `olm::Session`): the keys it was
/// built from and its double ratchet. The initiator sends pre-key messages until it has decrypted a reply; after that,
/// and always for the recipient, messages are normal. Not thread-safe: a class so that a session is never copied (a
/// copy would reuse message keys); its owner (an actor) serializes the calls. No I/O.
public final class OlmSession {
    /// The keys the session was built from (for pre-key messages and the session id).
    public let sessionKeys: OlmSessionKeys
    /// The double ratchet.
    private(set) var ratchet: OlmRatchet

    init(sessionKeys: OlmSessionKeys, ratchet: OlmRatchet) {
        self.sessionKeys = sessionKeys
        self.ratchet = ratchet
    }

    /// The session id (SHA-256 of the initiator's identity and base keys and the recipient's one-time key).
    public var sessionID: String { sessionKeys.sessionID }

    /// Whether this side has decrypted a message of the session (the recipient has, by construction); until then
    /// `encrypt` produces pre-key messages.
    public var hasReceivedMessage: Bool { !ratchet.receiverChains.isEmpty }

    /// Encrypts `plaintext`: a pre-key message (type 0) until a reply was decrypted, then normal messages (type 1).
    public func encrypt(_ plaintext: [UInt8]) throws -> OlmMessage {
        let message = try ratchet.encrypt(plaintext)
        return hasReceivedMessage ? .normal(message) : .preKey(OlmPreKeyMessage(sessionKeys: sessionKeys, message: message))
    }

    /// Decrypts a message of this session. A pre-key message must carry this session's keys
    /// (`preKeyMessageForAnotherSession` otherwise); the session changes only if the message authenticates.
    public func decrypt(_ message: OlmMessage) throws -> [UInt8] {
        switch message {
        case .normal(let normal):
            return try ratchet.decrypt(normal)
        case .preKey(let preKey):
            guard matches(preKey) else { throw MatrixCryptoError.preKeyMessageForAnotherSession }
            return try ratchet.decrypt(preKey.message)
        }
    }

    /// Whether `message` belongs to this session: the same initiator identity key, base key and one-time key. This is
    /// how the recipient finds the session of a pre-key message before creating a new one.
    public func matches(_ message: OlmPreKeyMessage) -> Bool {
        message.sessionKeys == sessionKeys
    }

    /// Whether `message` belongs to this session and comes from `identityKey` (the `sender_key` of the event).
    public func matches(_ message: OlmPreKeyMessage, from identityKey: Curve25519PublicKey) -> Bool {
        matches(message) && message.sessionKeys.identityKey == identityKey
    }
}
