import FoundationEssentials
import IsthmusCommon

extension Config {
    /// Environment variables that may supply secrets instead of the file (they win over the file).
    public enum SecretVariable {
        public static let asToken = "ISTHMUS_AS_TOKEN"
        public static let hsToken = "ISTHMUS_HS_TOKEN"
        public static let componentSecret = "ISTHMUS_COMPONENT_SECRET"
        public static let provisioningSecret = "ISTHMUS_PROVISIONING_SECRET"
        /// Client mode's account password (`xmpp.client.password`).
        public static let xmppPassword = "ISTHMUS_XMPP_PASSWORD"
        /// Matrix client mode's account password (`matrix.client.password`).
        public static let matrixPassword = "ISTHMUS_MATRIX_PASSWORD"
        /// The key that seals end-to-end encryption state in the store (`encryption.pickle_key`).
        public static let pickleKey = "ISTHMUS_PICKLE_KEY"
    }

    /// Reads and validates the config file at `path`. Does file I/O.
    ///
    /// - Parameter environment: where secrets may come from (`ProcessInfo.processInfo.environment` in production).
    public static func load(path: String, environment: [String: String]) throws(ConfigError) -> Config {
        let url = URL(fileURLWithPath: path)
        let text: String
        do {
            let data = try Data(contentsOf: url)
            guard let decoded = String(data: data, encoding: .utf8) else {
                throw ConfigError(.unreadable(path: path, reason: "not UTF-8 text"))
            }
            text = decoded
        } catch let error as ConfigError {
            throw error
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "permission denied or not a file" : "no such file"
            throw ConfigError(.unreadable(path: path, reason: reason))
        }
        let folder = url.deletingLastPathComponent().path
        do {
            var config = try parse(text, baseDirectory: folder, environment: environment)
            for index in config.warnings.indices { config.warnings[index].file = path }
            return config
        } catch {
            var located = error
            located.file = path
            throw located
        }
    }

    /// Parses and validates config text. Relative paths resolve against `baseDirectory`. Pure.
    public static func parse(_ text: String, baseDirectory: String, environment: [String: String]) throws(ConfigError) -> Config {
        let root: YAMLNode
        do {
            root = try YAMLNode.parse(text)
        } catch {
            throw ConfigError(.syntax(problem: error.problem), mark: error.mark)
        }
        if case .null = root { throw ConfigError(.missingKey, key: "matrix") }
        var top = try ConfigReader(root, path: "")
        guard top.has("matrix") else { throw ConfigError(.missingKey, key: "matrix", mark: top.mark) }
        var warnings: [ConfigError] = []

        var matrixReader = try top.section("matrix")
        var matrix = try decodeMatrix(&matrixReader)
        matrix.client = try decodeMatrixAccount(&matrixReader, serverName: matrix.serverName, environment: environment, warnings: &warnings)
        warnings += matrixReader.unknownKeys()
        for required in matrix.mode == .appservice ? ["appservice", "xmpp"] : ["xmpp"] where !top.has(required) {
            throw ConfigError(.missingKey, key: required, mark: top.mark)
        }

        let appservice: AppService
        if let account = matrix.client {
            // Not read (a leftover section is reported as an unknown key).
            appservice = unusedAppService(for: account, homeserverURL: matrix.homeserverURL)
        } else {
            var asReader = try top.section("appservice")
            appservice = try decodeAppService(&asReader, environment: environment)
            // `serve` builds its ghosts' user ids from these: refuse here what it would refuse at start (found by fuzzing).
            guard GhostNamespace(prefix: appservice.ghostPrefix, serverName: matrix.serverName, botLocalpart: appservice.botLocalpart) != nil else {
                throw asReader.invalid("ghost_prefix", "'\(appservice.ghostPrefix)' cannot prefix ghost user ids on '\(matrix.serverName)' "
                                       + "(a-z 0-9 . _ = - / + without '==', and the ids must fit in 255 bytes)")
            }
            warnings += asReader.unknownKeys()
        }

        var xmppReader = try top.section("xmpp")
        let xmpp = try decodeXMPP(&xmppReader, environment: environment, baseDirectory: baseDirectory, warnings: &warnings)
        warnings += xmppReader.unknownKeys()

        var dbReader = try top.section("database")
        let location = try decodeDatabaseLocation(&dbReader, baseDirectory: baseDirectory)
        let rawSynchronous = try dbReader.optionalString("synchronous") ?? Database.Synchronous.normal.rawValue
        guard let synchronous = Database.Synchronous(rawValue: rawSynchronous) else {
            throw dbReader.invalid("synchronous", "must be normal or full")
        }
        warnings += dbReader.unknownKeys()

        var logReader = try top.section("logging")
        let logging = try decodeLogging(&logReader, baseDirectory: baseDirectory)
        warnings += logReader.unknownKeys()

        var metricsReader = try top.section("metrics")
        let metrics = try decodeMetrics(&metricsReader)
        if let listen = metrics.listen, matrix.mode == .appservice, listen.port == appservice.listen.port,
           listen.host == appservice.listen.host || [listen.host, appservice.listen.host].contains(where: { $0 == "0.0.0.0" || $0 == "::" }) {
            throw metricsReader.invalid("listen", "\(listen) is appservice.listen's port; the operations listener needs its own")
        }
        warnings += metricsReader.unknownKeys()
        var provisioningReader = try top.section("provisioning")
        let provisioning = try decodeProvisioning(&provisioningReader, environment: environment)
        warnings += provisioningReader.unknownKeys()
        var powerLevelsReader = try top.section("power_levels")
        let powerLevels = try decodePowerLevels(&powerLevelsReader)
        warnings += powerLevelsReader.unknownKeys()
        var mediaReader = try top.section("media")
        let media = try decodeMedia(&mediaReader)
        warnings += mediaReader.unknownKeys()
        var relayReader = try top.section("relay")
        let relay = try decodeRelay(&relayReader)
        warnings += relayReader.unknownKeys()
        var gatewayReader = try top.section("gateway")
        let gateway = try decodeGateway(&gatewayReader, matrixMode: matrix.mode, xmppMode: xmpp.mode)
        warnings += gatewayReader.unknownKeys()
        var encryptionReader = try top.section("encryption")
        let encryption = try decodeEncryption(&encryptionReader, matrixMode: matrix.mode, gateway: gateway, environment: environment)
        warnings += encryptionReader.unknownKeys()
        var haReader = try top.section("ha")
        let ha = try decodeHighAvailability(&haReader)
        if ha.enabled && metrics.listen == nil {
            throw haReader.invalid("enabled", "an active/standby pair needs metrics.listen: the load balancer checks /ready there")
        }
        warnings += haReader.unknownKeys()
        warnings += top.unknownKeys()

        var config = Config(
            matrix: matrix, appservice: appservice, xmpp: xmpp,
            database: Database(location: location, synchronous: synchronous), logging: logging, metrics: metrics)
        config.provisioning = provisioning
        config.powerLevels = powerLevels
        config.media = media
        config.ha = ha
        config.relay = relay
        config.gateway = gateway
        config.encryption = encryption
        config.warnings = warnings
        return config
    }

    private static func decodeMatrix(_ reader: inout ConfigReader) throws(ConfigError) -> Matrix {
        let urlText = try reader.string("homeserver_url")
        guard let url = httpURL(urlText) else {
            throw reader.invalid("homeserver_url", "expected an http:// or https:// URL, got '\(urlText)'")
        }
        let serverName = try reader.string("server_name")
        guard isValidServerName(serverName) else {
            throw reader.invalid("server_name", "'\(serverName)' is not a valid server name")
        }
        return Matrix(homeserverURL: url, serverName: serverName)
    }

    private static func decodeAppService(_ reader: inout ConfigReader, environment: [String: String]) throws(ConfigError) -> AppService {
        let id = try reader.string("id")
        let urlText = try reader.string("url")
        guard let url = httpURL(urlText), let host = url.host else {
            throw reader.invalid("url", "expected an http:// or https:// URL, got '\(urlText)'")
        }
        let listen: HostPort
        if let listenText = try reader.optionalString("listen") {
            guard let parsed = HostPort(listenText) else {
                throw reader.invalid("listen", "expected host:port, got '\(listenText)'")
            }
            listen = parsed
        } else {
            listen = HostPort(host: host, port: url.port ?? (url.scheme == "https" ? 443 : 80))
        }
        let asToken = try secret(&reader, "as_token", variable: SecretVariable.asToken, environment: environment)
        let hsToken = try secret(&reader, "hs_token", variable: SecretVariable.hsToken, environment: environment)
        if asToken == hsToken {
            throw reader.invalid("hs_token", "must differ from as_token (each side must prove itself with its own secret)")
        }
        let bot = try reader.optionalString("bot_localpart") ?? "isthmus"
        guard isValidLocalpart(bot) else {
            throw reader.invalid("bot_localpart", "'\(bot)' is not a valid Matrix localpart (a-z, 0-9, . _ = - /)")
        }
        let prefix = try reader.optionalString("ghost_prefix") ?? "_xmpp_"
        guard !prefix.isEmpty, isValidLocalpart(prefix) else {
            throw reader.invalid("ghost_prefix", "'\(prefix)' is not a valid Matrix localpart prefix")
        }
        if bot.hasPrefix(prefix) {
            throw reader.invalid("bot_localpart", "must not start with ghost_prefix '\(prefix)'")
        }
        return AppService(id: id, url: url, listen: listen, asToken: asToken, hsToken: hsToken,
                          botLocalpart: bot, ghostPrefix: prefix)
    }

    private static func decodeXMPP(_ reader: inout ConfigReader, environment: [String: String], baseDirectory: String,
                                   warnings: inout [ConfigError]) throws(ConfigError) -> XMPP {
        let modeText = try reader.optionalString("mode") ?? XMPPMode.component.rawValue
        guard let mode = XMPPMode(rawValue: modeText) else { throw reader.invalid("mode", "must be component or client") }
        let nick = try reader.optionalString("bot_nick") ?? "Matrix"
        guard !nick.allSatisfy(\.isWhitespace) else {
            throw reader.invalid("bot_nick", "must not be blank")
        }
        if mode == .client {
            // The component keys are not read (a leftover one is reported as unknown).
            guard reader.has("client") else {
                throw ConfigError(.missingKey, key: "\(reader.path).client", mark: reader.mark)
            }
            var clientReader = try reader.section("client")
            let client = try decodeXMPPClient(&clientReader, environment: environment, baseDirectory: baseDirectory)
            warnings += clientReader.unknownKeys()
            var xmpp = XMPP(componentDomain: client.jid.domain, serverHost: client.host, serverPort: client.port, componentSecret: "",
                            botNick: nick)
            xmpp.client = client
            return xmpp
        }
        let domain = try reader.string("component_domain")
        // Also a valid JID domain (no empty label, no leading or trailing dot): the bridge's occupants live under it.
        guard isValidServerName(domain), !domain.contains(":"), JID(localpart: nil, domain: domain) != nil else {
            throw reader.invalid("component_domain", "'\(domain)' is not a valid domain")
        }
        let host = try reader.optionalString("server_host") ?? "127.0.0.1"
        let port = try reader.optionalInt("server_port") ?? 5347
        guard (1...65535).contains(port) else {
            throw reader.invalid("server_port", "\(port) is not a TCP port (1–65535)")
        }
        let secret = try secret(&reader, "component_secret", variable: SecretVariable.componentSecret, environment: environment)
        return XMPP(componentDomain: domain, serverHost: host, serverPort: port, componentSecret: secret, botNick: nick)
    }

    static func secret(_ reader: inout ConfigReader, _ key: String, variable: String,
                               environment: [String: String]) throws(ConfigError) -> String {
        let fromFile = try reader.optionalString(key)
        if let value = environment[variable], !value.isEmpty { return value }
        guard let fromFile, !fromFile.isEmpty else {
            throw ConfigError(.missingSecret(variable: variable), key: "\(reader.path).\(key)", mark: reader.mark)
        }
        return fromFile
    }

    /// `database.path` (SQLite, the default) or `database.url` (PostgreSQL) with `database.pool_size`: exactly one.
    /// Messages never repeat the URL (it may hold a password).
    private static func decodeDatabaseLocation(_ reader: inout ConfigReader,
                                               baseDirectory: String) throws(ConfigError) -> DatabaseLocation {
        let rawURL = try reader.optionalString("url")
        let rawPath = try reader.optionalString("path")
        let poolSize = try reader.optionalInt("pool_size")
        guard let rawURL else {
            if poolSize != nil { throw reader.invalid("pool_size", "applies to database.url (PostgreSQL) only") }
            let path = rawPath ?? "isthmus.sqlite"
            if path.isEmpty { throw reader.invalid("path", "must not be empty") }
            return .sqlite(path: resolve(path, against: baseDirectory))
        }
        if rawPath != nil { throw reader.invalid("url", "give database.url (PostgreSQL) or database.path (SQLite), not both") }
        guard let url = PostgresURL(rawURL) else {
            throw reader.invalid("url", "must be a postgresql:// or postgres:// URL")
        }
        let size = poolSize ?? 2
        guard (1...64).contains(size) else { throw reader.invalid("pool_size", "must be 1–64") }
        return .postgres(url: url, poolSize: size)
    }

    /// `path` made absolute against the config file's folder.
    static func resolve(_ path: String, against baseDirectory: String) -> String {
        path.hasPrefix("/") ? path : URL(fileURLWithPath: baseDirectory).appendingPathComponent(path).standardizedFileURL.path
    }

    static func httpURL(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", url.host?.isEmpty == false else { return nil }
        // URL accepts any number as the port; a TCP port is 1–65535 (found by fuzzing: `:69331` was accepted).
        if let port = url.port, !(1...65535).contains(port) { return nil }
        return url
    }

    static func isValidLocalpart(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("0"..."9").contains($0) || "._=-/+".unicodeScalars.contains($0)
        }
    }

    static func isValidServerName(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 255 && text.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
                || "-.:[]".unicodeScalars.contains($0)
        }
    }
}
