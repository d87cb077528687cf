import IsthmusCommon

extension Config {
    /// `encryption:` — end-to-bridge encryption for Matrix rooms and DMs (issue 30; docs/encryption.md), with
    /// mautrix's meanings. With `allow` on, each ghost gets its own cross-signed device at its first encrypted room;
    /// encrypted DMs and linked rooms are bridged both ways. `default` and `require` are not supported yet.
    public struct Encryption: Sendable, Equatable {
        /// `allow`: the bridge may take part in encrypted rooms (default false).
        public var allow = false
        /// `default`: rooms and DMs the bridge creates are encrypted (default false; needs bridged encrypted messages).
        public var encryptByDefault = false
        /// `require`: unencrypted rooms are not bridged (default false; needs bridged encrypted messages).
        public var require = false
        /// `pickle_key` (or `ISTHMUS_PICKLE_KEY`): the secret that seals the devices' keys in the store. Needed when
        /// `allow` is on; changing it makes the kept keys unreadable.
        public var pickleKey: String?

        /// The shortest pickle key accepted (`openssl rand -base64 32` writes 44 characters).
        public static let minimumPickleKeyLength = 32

        public init() {}
    }

    /// `encryption:` — `allow`, `default`, `require`, `pickle_key`. Devices for the bridge's users need the
    /// application service (an ordinary Matrix account cannot create devices for others).
    static func decodeEncryption(_ reader: inout ConfigReader, matrixMode: MatrixMode,
                                 environment: [String: String]) throws(ConfigError) -> Encryption {
        var encryption = Encryption()
        encryption.allow = try reader.optionalBool("allow") ?? false
        encryption.encryptByDefault = try reader.optionalBool("default") ?? false
        encryption.require = try reader.optionalBool("require") ?? false
        let fromFile = try reader.optionalString("pickle_key")
        if let value = environment[SecretVariable.pickleKey], !value.isEmpty {
            encryption.pickleKey = value
        } else if let fromFile, !fromFile.isEmpty {
            encryption.pickleKey = fromFile
        }
        for (key, on) in [("default", encryption.encryptByDefault), ("require", encryption.require)] where on {
            throw reader.invalid(key, "is not supported yet: the bridge takes part in encrypted rooms (encryption.allow) but does "
                                 + "not encrypt the rooms it creates nor refuse unencrypted ones (docs/encryption.md)")
        }
        guard encryption.allow else { return encryption }
        if matrixMode == .client {
            throw reader.invalid("allow", "needs the application service (matrix.mode: appservice): only an appservice can give "
                                 + "its ghosts devices")
        }
        guard let key = encryption.pickleKey else {
            throw ConfigError(.missingSecret(variable: SecretVariable.pickleKey), key: "\(reader.path).pickle_key", mark: reader.mark)
        }
        guard key.count >= Encryption.minimumPickleKeyLength else {
            throw reader.invalid("pickle_key", "must be at least \(Encryption.minimumPickleKeyLength) characters "
                                 + "(make one with: openssl rand -base64 32)")
        }
        return encryption
    }
}
