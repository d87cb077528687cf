/// A XEP-0484 FAST token the server issued to this client (its user-agent id): what the next login authenticates
/// with instead of the password, in one round trip. A secret like the password: never logged (its description
/// names the mechanism only).
public struct FASTToken: Sendable, Hashable, CustomStringConvertible {
    /// The mechanism the token was issued for; the server refuses it with any other (XEP-0484 §4.4).
    public var mechanism: HashedTokenMechanism
    /// The secret, exactly as the server wrote it in `<token token>`.
    public var secret: String
    /// When the server says it expires (`<token expiry>`, XEP-0082 DateTime as written), if it said.
    public var expiry: String?
    /// How many logins have used it: sent as `<fast count>`, one more each attempt, 0 for a new token (§4.4).
    public var count: Int

    public init(mechanism: HashedTokenMechanism, secret: String, expiry: String?, count: Int = 0) {
        self.mechanism = mechanism
        self.secret = secret
        self.expiry = expiry
        self.count = count
    }

    public var description: String { "FAST token for \(mechanism) (count \(count), expires \(expiry ?? "-"))" }
}
