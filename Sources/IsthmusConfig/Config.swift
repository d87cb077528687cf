import FoundationEssentials
import IsthmusCommon

/// The bridge's configuration, decoded from YAML and validated at load.
///
/// The key names are a contract (tools outside the project write these files); see `config/isthmus.example.yaml`.
public struct Config: Sendable, Equatable {
    /// `matrix:` — the homeserver.
    public struct Matrix: Sendable, Equatable {
        /// Client-server API base URL, e.g. `http://127.0.0.1:8008`.
        public var homeserverURL: URL
        /// The homeserver's domain (the part after `:` in user ids).
        public var serverName: String
        /// `client:` in client mode; nil: appservice mode.
        public var client: MatrixAccount?

        /// `mode`.
        public var mode: MatrixMode { client == nil ? .appservice : .client }
    }

    /// `appservice:` — how Isthmus is registered with the homeserver. In client mode (``Matrix/mode``) the section is
    /// not read and this holds neutral values that nothing may use: no tokens, no listener.
    public struct AppService: Sendable, Equatable {
        public var id: String
        /// How the homeserver reaches the bridge (goes into the registration).
        public var url: URL
        /// Where `serve` accepts homeserver requests.
        public var listen: HostPort
        public var asToken: String
        public var hsToken: String
        /// Localpart of the bridge's own Matrix user.
        public var botLocalpart: String
        /// XMPP occupants appear as `@<ghostPrefix>…:<serverName>`.
        public var ghostPrefix: String
    }

    /// `xmpp:` — the XEP-0114 component connection, or in client mode (`mode: client`) the account.
    public struct XMPP: Sendable, Equatable {
        /// The component's domain; in client mode the account's domain.
        public var componentDomain: String
        /// Where the bridge connects (in client mode `client.server_host`, else the account's domain).
        public var serverHost: String
        public var serverPort: Int
        /// Empty in client mode.
        public var componentSecret: String
        /// Nick of the bridge's own occupant in linked rooms.
        public var botNick: String
        /// `client:` in client mode; nil: component mode.
        public var client: XMPPClient?

        /// `mode`.
        public var mode: XMPPMode { client == nil ? .component : .client }

        public init(componentDomain: String, serverHost: String, serverPort: Int, componentSecret: String, botNick: String) {
            self.componentDomain = componentDomain
            self.serverHost = serverHost
            self.serverPort = serverPort
            self.componentSecret = componentSecret
            self.botNick = botNick
        }
    }

    /// `database:` — the store: a SQLite file (`database.path`, the default) or a PostgreSQL database (`database.url`).
    public struct Database: Sendable, Equatable {
        /// Where the store lives: `database.path` (absolute; relative paths in the file resolve against the config
        /// file's folder) or `database.url` with `database.pool_size`.
        public var location: DatabaseLocation
        /// `database.synchronous`: how hard each commit is pushed to the disk (default ``Synchronous/normal``; SQLite only).
        public var synchronous: Synchronous = .normal

        /// The SQLite file; nil for PostgreSQL.
        public var path: String? {
            if case .sqlite(let path) = location { return path }
            return nil
        }

        public init(location: DatabaseLocation, synchronous: Synchronous = .normal) {
            self.location = location
            self.synchronous = synchronous
        }

        /// SQLite's `PRAGMA synchronous` in WAL mode: what a commit survives once it returns.
        public enum Synchronous: String, Sendable, Equatable, CaseIterable {
            /// Survives a crash of the process (kill -9); the last commits may be lost on power loss or an OS crash.
            case normal
            /// Also survives power loss and OS crashes: every commit waits for the disk (slower; see docs/deploy.md).
            case full
        }
    }

    /// `logging:` — log output.
    public struct Logging: Sendable, Equatable {
        /// The level of every logger without a more specific entry in ``levels``.
        public var level: Logger.Level
        /// `text` (one logfmt-like line per record) or `json` (one JSON object per line).
        public var format: LogFormat = .text
        /// Levels by logger label (`xmpp.component`) or dotted prefix of labels (`xmpp`); the longest match wins.
        public var levels: [String: Logger.Level] = [:]
        /// Where the log goes: this file (absolute; reopened on SIGHUP) or, when nil, standard error.
        public var file: String?

        /// The level table for ``LogSink/configure(levels:)``.
        public var levelTable: LogLevels { LogLevels(default: level, modules: levels) }
    }

    /// `metrics:` — the operations listener (Prometheus `/metrics`, `/health`, `/ready`).
    public struct Metrics: Sendable, Equatable {
        /// Where it listens; nil (key absent): no listener.
        public var listen: HostPort?
    }

    public var matrix: Matrix
    public var appservice: AppService
    public var xmpp: XMPP
    public var database: Database
    public var logging: Logging
    public var metrics = Metrics()
    public var provisioning = Provisioning()
    /// `power_levels:` — what MUC positions give ghosts on Matrix.
    public var powerLevels = PowerLevels()
    /// `media:` (see ``Media``).
    public var media = Media()
    /// `ha:` (see ``HighAvailability``).
    public var ha = HighAvailability()
    /// `relay:` — the client modes' formats of relayed messages.
    public var relay = Relay()
    /// `gateway:` — rooms opened on demand through aliases.
    public var gateway = Gateway()
    /// `encryption:` — devices for the ghosts in encrypted rooms (off by default).
    public var encryption = Encryption()
    /// Non-fatal findings (unknown keys), to be shown by `check-config` and logged by `serve`.
    public var warnings: [ConfigError] = []

    public static func == (lhs: Config, rhs: Config) -> Bool {
        lhs.matrix == rhs.matrix && lhs.appservice == rhs.appservice && lhs.xmpp == rhs.xmpp
            && lhs.database == rhs.database && lhs.logging == rhs.logging && lhs.metrics == rhs.metrics
            && lhs.provisioning == rhs.provisioning && lhs.powerLevels == rhs.powerLevels && lhs.media == rhs.media
            && lhs.ha == rhs.ha
    }

    /// The bridge bot's full Matrix user id, e.g. `@isthmus:localhost`; in client mode the account's.
    public var botUserID: String { matrix.client?.userID.rawValue ?? "@\(appservice.botLocalpart):\(matrix.serverName)" }
}

/// A `host:port` pair, as in `appservice.listen`.
public struct HostPort: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port` or `[v6]:port`.
    public init?(_ text: String) {
        let host: Substring, portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (1...65535).contains(port) else { return nil }
        self.host = String(host)
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
