/// A user's cross-signing keys (client-server API §11.12.2.2 "Cross-signing"): the master key, which signs the other
/// two; the self-signing key, which signs the user's devices; the user-signing key, which signs other users' master
/// keys. The bridge makes them for its ghosts, so each ghost's device is signed by its owner's identity and Element
/// shows no warning for it (ENCRYPTION.md §3). Pure value.
public struct CrossSigningKeys: Sendable, Equatable {
    public let master: Ed25519SecretKey
    public let selfSigning: Ed25519SecretKey
    public let userSigning: Ed25519SecretKey

    /// Fresh random keys.
    public init() {
        self.init(master: Ed25519SecretKey(), selfSigning: Ed25519SecretKey(), userSigning: Ed25519SecretKey())
    }

    init(master: Ed25519SecretKey, selfSigning: Ed25519SecretKey, userSigning: Ed25519SecretKey) {
        self.master = master
        self.selfSigning = selfSigning
        self.userSigning = userSigning
    }

    /// The key id of a cross-signing key: `ed25519:` and its public key (the spec names them by the key itself).
    public static func keyID(_ key: Ed25519PublicKey) -> String { "ed25519:\(key.base64)" }

    /// The master key object: the root of the user's trust, signed by nothing here.
    public func masterKey(userID: String) -> CanonicalJSON {
        Self.keyObject(master.publicKey, usage: "master", userID: userID)
    }

    /// The self-signing key object, signed by the master key.
    public func selfSigningKey(userID: String) throws -> CanonicalJSON {
        try Self.keyObject(selfSigning.publicKey, usage: "self_signing", userID: userID)
            .signed(by: userID, keyID: Self.keyID(master.publicKey), with: master)
    }

    /// The user-signing key object, signed by the master key.
    public func userSigningKey(userID: String) throws -> CanonicalJSON {
        try Self.keyObject(userSigning.publicKey, usage: "user_signing", userID: userID)
            .signed(by: userID, keyID: Self.keyID(master.publicKey), with: master)
    }

    /// `deviceKeys` (a device's signed keys object) with the self-signing key's signature added, to upload with
    /// `/keys/signatures/upload`.
    public func signDevice(_ deviceKeys: CanonicalJSON, userID: String) throws -> CanonicalJSON {
        try deviceKeys.signed(by: userID, keyID: Self.keyID(selfSigning.publicKey), with: selfSigning)
    }

    private static func keyObject(_ key: Ed25519PublicKey, usage: String, userID: String) -> CanonicalJSON {
        .object(["user_id": .string(userID), "usage": .array([.string(usage)]),
                 "keys": .object([keyID(key): .string(key.base64)])])
    }
}
