/// What earlier logins left that spares work on the next, kept per account across restarts: SCRAM's salted password
/// (used instead of PBKDF2 on the password when the server's salt, iteration count and hash are the same) and a
/// XEP-0484 FAST token. The configured password stays the fallback for both.
public struct CredentialCache: Sendable, Hashable {
    public var saltedPassword: SCRAMClient.SaltedPassword?
    public var fastToken: FASTToken?

    public init(saltedPassword: SCRAMClient.SaltedPassword? = nil, fastToken: FASTToken? = nil) {
        self.saltedPassword = saltedPassword
        self.fastToken = fastToken
    }
}
