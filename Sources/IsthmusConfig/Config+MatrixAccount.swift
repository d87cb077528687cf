import FoundationEssentials
import IsthmusCommon

extension Config {
    /// `matrix.mode`: how the bridge is on the homeserver.
    public enum MatrixMode: String, Sendable, Equatable, CaseIterable {
        /// An application service (needs the homeserver's admin): XMPP occupants are ghosts of their own.
        case appservice
        /// An ordinary account (`matrix.client`): XMPP occupants speak through it (`relay.matrix_format`). No
        /// `appservice` section is read.
        case client
    }

    /// `matrix.client:` — the ordinary account the bridge runs as in client mode.
    public struct MatrixAccount: Sendable, Equatable {
        /// `user_id`: on this homeserver (its server part is `matrix.server_name`).
        public var userID: UserID
        /// `password`, or the env `ISTHMUS_MATRIX_PASSWORD` (which wins); nil: none, so the session `isthmus login`
        /// stored (e.g. through SSO) is the only one, and only the operator can make a new one.
        public var password: String?
        /// `device_id`; nil: generated at the first login (``DeviceID/generated()``), kept with the session and reused by
        /// every later login on it.
        public var deviceID: DeviceID?

        public init(userID: UserID, password: String? = nil, deviceID: DeviceID? = nil) {
            self.userID = userID
            self.password = password
            self.deviceID = deviceID
        }
    }

    /// `matrix.mode` and, in client mode, `matrix.client` (`user_id`, `password`, `device_id`).
    static func decodeMatrixAccount(_ reader: inout ConfigReader, serverName: String, environment: [String: String],
                                    warnings: inout [ConfigError]) throws(ConfigError) -> MatrixAccount? {
        let modeText = try reader.optionalString("mode") ?? MatrixMode.appservice.rawValue
        guard let mode = MatrixMode(rawValue: modeText) else { throw reader.invalid("mode", "must be appservice or client") }
        guard mode == .client else { return nil }
        guard reader.has("client") else { throw ConfigError(.missingKey, key: "\(reader.path).client", mark: reader.mark) }
        var clientReader = try reader.section("client")
        let text = try clientReader.string("user_id")
        guard let user = UserID(text), isValidServerName(user.server) else {
            throw clientReader.invalid("user_id", "'\(text)' is not a Matrix user id (@localpart:server)")
        }
        // The account logs in at homeserver_url, whose users are @…:server_name: another server part is a typo or the
        // wrong homeserver, and its login would be refused or answer for someone else.
        guard user.server == serverName else {
            throw clientReader.invalid("user_id", "'\(text)' is not on matrix.server_name '\(serverName)' (the homeserver the bridge logs in at)")
        }
        var account = MatrixAccount(userID: user)
        let fromFile = try clientReader.optionalString("password")
        account.password = environment[SecretVariable.matrixPassword].flatMap { $0.isEmpty ? nil : $0 } ?? fromFile.flatMap { $0.isEmpty ? nil : $0 }
        if let deviceText = try clientReader.optionalString("device_id") {
            // OAuth 2.0 lets only such ids name a device, and the device must outlive a move of the homeserver to it.
            guard let device = DeviceID(deviceText), device.isOAuthCompatible else {
                throw clientReader.invalid("device_id", "'\(deviceText)' must be 10 to 255 characters from A-Z a-z 0-9 - . _ ~ "
                                           + "(the device ids OAuth 2.0 allows)")
            }
            account.deviceID = device
        }
        warnings += clientReader.unknownKeys()
        return account
    }

    /// In client mode, the `appservice` section is not read: neutral values (no tokens, no listener) stand in for it,
    /// so that `Config` keeps its shape; code that needs the appservice checks ``Matrix/mode`` first.
    static func unusedAppService(for account: MatrixAccount, homeserverURL: URL) -> AppService {
        AppService(id: "", url: homeserverURL, listen: HostPort(host: "127.0.0.1", port: 0), asToken: "", hsToken: "",
                   botLocalpart: account.userID.localpart, ghostPrefix: "_xmpp_")
    }
}
