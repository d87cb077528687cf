/// A device's Olm account (Olm spec; libolm `account.cpp`, vodozemac `olm::Account`): its Curve25519 identity key,
/// its Ed25519 fingerprint key, its one-time keys and its fallback key. It creates sessions: outbound from a peer's
/// identity key and claimed one-time key, inbound from a pre-key message (consuming the one-time key). Not
/// thread-safe: its owner (an actor) serializes the calls. No I/O.
public final class OlmAccount {
    /// One-time keys kept unused at most (vodozemac keeps 50, libolm 100); the oldest are forgotten beyond it.
    public static let maxOneTimeKeys = 100

    /// A one-time or fallback key with its id and whether it was published.
    struct OneTimeKey: Sendable, Equatable {
        var id: UInt64
        var key: Curve25519SecretKey
        var published: Bool

        /// The key id as Matrix names it (`signed_curve25519:<id>`): the unpadded base64 of the id's 8 big-endian
        /// bytes, as vodozemac writes it.
        var keyID: String { UnpaddedBase64.encode((0..<8).map { UInt8(truncatingIfNeeded: id >> (56 - 8 * $0)) }) }
    }

    /// The Curve25519 identity key (`curve25519:DEVICE`).
    let identityKey: Curve25519SecretKey
    /// The Ed25519 fingerprint key (`ed25519:DEVICE`).
    let signingKey: Ed25519SecretKey
    /// Unused one-time keys, oldest first.
    private(set) var oneTimeKeys: [OneTimeKey]
    /// The current fallback key, if one was generated.
    private(set) var fallbackKey: OneTimeKey?
    /// The fallback key before the current one, kept for pre-key messages still in flight.
    private(set) var previousFallbackKey: OneTimeKey?
    /// The id the next generated key gets.
    private(set) var nextKeyID: UInt64

    /// A new account with fresh random identity and fingerprint keys.
    public convenience init() {
        self.init(identityKey: Curve25519SecretKey(), signingKey: Ed25519SecretKey(), oneTimeKeys: [], fallbackKey: nil,
                  previousFallbackKey: nil, nextKeyID: 0)
    }

    init(identityKey: Curve25519SecretKey, signingKey: Ed25519SecretKey, oneTimeKeys: [OneTimeKey],
         fallbackKey: OneTimeKey?, previousFallbackKey: OneTimeKey?, nextKeyID: UInt64) {
        self.identityKey = identityKey
        self.signingKey = signingKey
        self.oneTimeKeys = oneTimeKeys
        self.fallbackKey = fallbackKey
        self.previousFallbackKey = previousFallbackKey
        self.nextKeyID = nextKeyID
    }

    /// The public identity key.
    public var curve25519Key: Curve25519PublicKey { identityKey.publicKey }

    /// The public fingerprint key.
    public var ed25519Key: Ed25519PublicKey { signingKey.publicKey }

    /// Signs `message` with the fingerprint key.
    public func sign(_ message: [UInt8]) -> Ed25519Signature {
        signingKey.sign(message)
    }

    /// `object` signed by this device: its signature under `signatures[userID]["ed25519:<deviceID>"]` (device keys,
    /// one-time keys).
    public func sign(_ object: CanonicalJSON, userID: String, deviceID: String) throws -> CanonicalJSON {
        try object.signed(by: userID, keyID: "ed25519:\(deviceID)", with: signingKey)
    }

    // MARK: One-time and fallback keys

    /// Generates `count` one-time keys, forgetting the oldest unused ones beyond `maxOneTimeKeys`.
    public func generateOneTimeKeys(count: Int) {
        for _ in 0..<count {
            oneTimeKeys.append(OneTimeKey(id: nextKeyID, key: Curve25519SecretKey(), published: false))
            nextKeyID += 1
        }
        if oneTimeKeys.count > Self.maxOneTimeKeys { oneTimeKeys.removeFirst(oneTimeKeys.count - Self.maxOneTimeKeys) }
    }

    /// The one-time keys not yet published, by key id (to upload with `/keys/upload`).
    public var unpublishedOneTimeKeys: [String: Curve25519PublicKey] {
        Dictionary(uniqueKeysWithValues: oneTimeKeys.filter { !$0.published }.map { ($0.keyID, $0.key.publicKey) })
    }

    /// The number of one-time keys kept (published or not), to compare with the server's count.
    public var storedOneTimeKeyCount: Int { oneTimeKeys.count }

    /// Marks every one-time key and the fallback key as published (after a successful upload).
    public func markKeysAsPublished() {
        for index in oneTimeKeys.indices { oneTimeKeys[index].published = true }
        fallbackKey?.published = true
    }

    /// Generates a new fallback key; the current one becomes the previous one (still accepted until forgotten).
    public func generateFallbackKey() {
        previousFallbackKey = fallbackKey
        fallbackKey = OneTimeKey(id: nextKeyID, key: Curve25519SecretKey(), published: false)
        nextKeyID += 1
    }

    /// The fallback key if it was not published yet, by key id (empty or one entry).
    public var unpublishedFallbackKey: [String: Curve25519PublicKey] {
        guard let fallbackKey, !fallbackKey.published else { return [:] }
        return [fallbackKey.keyID: fallbackKey.key.publicKey]
    }

    /// Forgets the previous fallback key (once pre-key messages to it can no longer arrive); true if there was one.
    @discardableResult
    public func forgetPreviousFallbackKey() -> Bool {
        defer { previousFallbackKey = nil }
        return previousFallbackKey != nil
    }

    // MARK: Sessions

    /// A new session to the device of `theirIdentityKey`, using one of its one-time (or fallback) keys claimed with
    /// `/keys/claim` (whose signature the caller checked). Its first messages are pre-key messages.
    /// S = ECDH(I_A, E_B) ‖ ECDH(E_A, I_B) ‖ ECDH(E_A, E_B) (Olm spec, "Initial setup").
    public func createOutboundSession(theirIdentityKey: Curve25519PublicKey,
                                      theirOneTimeKey: Curve25519PublicKey) throws -> OlmSession {
        let baseKey = Curve25519SecretKey()
        let secret = try identityKey.diffieHellman(with: theirOneTimeKey)
            + baseKey.diffieHellman(with: theirIdentityKey)
            + baseKey.diffieHellman(with: theirOneTimeKey)
        let keys = OlmSessionKeys(identityKey: curve25519Key, baseKey: baseKey.publicKey, oneTimeKey: theirOneTimeKey)
        return OlmSession(sessionKeys: keys, ratchet: .initiator(sharedSecret: secret, ratchetKey: Curve25519SecretKey()))
    }

    /// A session created from a pre-key message and its decrypted payload.
    public struct InboundCreation {
        /// The new session.
        public let session: OlmSession
        /// The plaintext of the pre-key message.
        public let plaintext: [UInt8]
    }

    /// A new session from a pre-key message that no existing session `matches`: finds the one-time (or fallback)
    /// key it names, derives the shared secret, decrypts the message, and only then removes the one-time key (a
    /// fallback key stays). `theirIdentityKey` is the event's `sender_key`: the message must carry the same key.
    public func createInboundSession(theirIdentityKey: Curve25519PublicKey?,
                                     message: OlmPreKeyMessage) throws -> InboundCreation {
        let keys = message.sessionKeys
        if let theirIdentityKey, theirIdentityKey != keys.identityKey {
            throw MatrixCryptoError.identityKeyMismatch(expected: theirIdentityKey.base64, actual: keys.identityKey.base64)
        }
        let oneTimeIndex = oneTimeKeys.firstIndex { $0.key.publicKey == keys.oneTimeKey }
        guard let oneTimeKey = oneTimeIndex.map({ oneTimeKeys[$0] })
            ?? [fallbackKey, previousFallbackKey].compactMap({ $0 }).first(where: { $0.key.publicKey == keys.oneTimeKey })
        else { throw MatrixCryptoError.unknownOneTimeKey(publicKey: keys.oneTimeKey.base64) }
        let secret = try oneTimeKey.key.diffieHellman(with: keys.identityKey)
            + identityKey.diffieHellman(with: keys.baseKey)
            + oneTimeKey.key.diffieHellman(with: keys.baseKey)
        let session = OlmSession(sessionKeys: keys,
                                 ratchet: .recipient(sharedSecret: secret, theirRatchetKey: message.message.ratchetKey))
        let plaintext = try session.decrypt(.preKey(message))
        if let oneTimeIndex { oneTimeKeys.remove(at: oneTimeIndex) }
        return InboundCreation(session: session, plaintext: plaintext)
    }
}
