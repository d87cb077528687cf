import IsthmusCommon

extension Config {
    /// `provisioning:` — who may link rooms besides the admin CLI: the HTTP API (`shared_secret`) and room owners from
    /// Matrix (`self_service`), and which MUC services they may link.
    public struct Provisioning: Sendable, Equatable {
        /// The bearer token of `/_isthmus/provision/v1/`; nil: the API is off (404).
        public var sharedSecret: String?
        /// Whether the bot accepts invitations and `!isthmus link`/`unlink` work in Matrix rooms (self-service linking).
        public var selfService = true
        /// MUC services links may use; nil: any.
        public var allowedMUCDomains: Set<String>?
        /// How long the MUC owner has to answer `yes` (`consent_timeout_seconds`; 300 by default).
        public var consentTimeout: Duration = .seconds(300)
        /// How long the bot stays in a room it was invited to while nothing is linked (`invite_timeout_seconds`; a day).
        public var inviteTimeout: Duration = .seconds(86_400)

        public init() {}
    }

    /// The shortest shared secret accepted (a guessable token would open the API).
    static let minimumSharedSecretLength = 16

    /// `provisioning:` — `shared_secret` (or `ISTHMUS_PROVISIONING_SECRET`), `self_service`, `allowed_muc_domains`,
    /// `consent_timeout_seconds`, `invite_timeout_seconds`.
    static func decodeProvisioning(_ reader: inout ConfigReader, environment: [String: String]) throws(ConfigError) -> Provisioning {
        var provisioning = Provisioning()
        let fromFile = try reader.optionalString("shared_secret")
        if let secret = environment[SecretVariable.provisioningSecret].flatMap({ $0.isEmpty ? nil : $0 }) ?? fromFile {
            guard secret.count >= minimumSharedSecretLength else {
                throw reader.invalid("shared_secret", "must be at least \(minimumSharedSecretLength) characters (leave it out to turn the API off)")
            }
            provisioning.sharedSecret = secret
        }
        provisioning.selfService = try reader.optionalBool("self_service") ?? true
        if let domains = try reader.optionalDomains("allowed_muc_domains") {
            provisioning.allowedMUCDomains = Set(domains)
        }
        if let seconds = try reader.optionalInt("consent_timeout_seconds") {
            guard seconds > 0 else { throw reader.invalid("consent_timeout_seconds", "must be positive") }
            provisioning.consentTimeout = .seconds(seconds)
        }
        if let seconds = try reader.optionalInt("invite_timeout_seconds") {
            guard seconds > 0 else { throw reader.invalid("invite_timeout_seconds", "must be positive") }
            provisioning.inviteTimeout = .seconds(seconds)
        }
        return provisioning
    }
}
