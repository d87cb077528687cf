import IsthmusCommon

extension Config {
    /// `encryption:` — end-to-bridge encryption for Matrix rooms and DMs (issue 30; docs/encryption.md), with
    /// mautrix's meanings. With `allow` on, each ghost gets its own cross-signed device at its first encrypted room;
    /// encrypted DMs and linked rooms are bridged both ways. `default` encrypts the DMs the bridge creates; `require`
    /// also refuses to link an unencrypted room or open an unencrypted DM.
    public struct Encryption: Sendable, Equatable {
        /// `allow`: the bridge may take part in encrypted rooms (default false).
        public var allow = false
        /// `default`: the DMs the bridge creates (an XMPP user writes first) are encrypted (default false; needs
        /// `allow`). The gateway's public rooms are not: anyone may read a public room.
        public var encryptByDefault = false
        /// `require`: unencrypted rooms are not linked and unencrypted DMs not opened; the DMs the bridge creates are
        /// encrypted (default false; needs `allow`, and no gateway: its rooms are public and unencrypted).
        public var require = false

        /// Whether the DMs the bridge creates are encrypted.
        public var encryptsCreatedRooms: Bool { allow && (encryptByDefault || require) }
        /// `pickle_key` (or `ISTHMUS_PICKLE_KEY`): the secret that seals the devices' keys in the store. Needed when
        /// `allow` is on; changing it makes the kept keys unreadable.
        public var pickleKey: String?

        /// The shortest pickle key accepted (`openssl rand -base64 32` writes 44 characters).
        public static let minimumPickleKeyLength = 32

        public init() {}
    }

    /// `encryption:` — `allow`, `default`, `require`, `pickle_key`. Devices for the bridge's users need the
    /// application service (an ordinary Matrix account cannot create devices for others).
    static func decodeEncryption(_ reader: inout ConfigReader, matrixMode: MatrixMode, gateway: Gateway,
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
        for (key, on) in [("default", encryption.encryptByDefault), ("require", encryption.require)] where on && !encryption.allow {
            throw reader.invalid(key, "needs encryption.allow: the bridge can only encrypt rooms it takes part in encrypted")
        }
        if encryption.require && (gateway.matrixAliases || gateway.xmppRooms) {
            throw reader.invalid("require", "cannot be on with the gateway (gateway.matrix_aliases, gateway.xmpp_rooms): its rooms are "
                                 + "public and unencrypted")
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
