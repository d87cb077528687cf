/// Where the store lives: a SQLite file (the embedded default) or a PostgreSQL database (`database.url`). Shared by
/// the config (which reads it) and the store (which opens it), so neither depends on the other.
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    /// A SQLite file (`:memory:` for tests).
    case sqlite(path: String)
    /// A PostgreSQL database, with how many connections the store may keep open to it.
    case postgres(url: PostgresURL, poolSize: Int = 2)

    /// For logs and `doctor`: the path, or the URL with its password redacted.
    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let url, _): url.description
        }
    }

    /// Which backend the location is on.
    public var backend: DatabaseBackend {
        switch self {
        case .sqlite: .sqlite
        case .postgres: .postgresql
        }
    }

    /// `sqlite` or `postgresql`, for logs and `doctor`.
    public var backendName: String { backend.rawValue }
}

/// The store's two backends; the raw value is the name logs and `doctor` show.
public enum DatabaseBackend: String, Sendable, Equatable {
    case sqlite
    case postgresql
}

/// A libpq connection URI (`postgresql://user:password@host:port/db?sslmode=…`), validated at init. Its
/// ``description`` redacts the password, so logging or printing it never shows one; only ``rawValue`` (handed to libpq)
/// holds it.
public struct PostgresURL: Sendable, Hashable, CustomStringConvertible {
    /// The URI exactly as configured, password included: for libpq only.
    public let rawValue: String

    /// Accepts `postgresql://` and `postgres://` URIs (the two schemes libpq takes) with something after the scheme.
    public init?(_ rawValue: String) {
        guard let scheme = Self.schemes.first(where: { rawValue.hasPrefix($0) }),
              rawValue.count > scheme.count,
              !rawValue.contains(where: { $0.isWhitespace }) else { return nil }
        self.rawValue = rawValue
    }

    private static let schemes = ["postgresql://", "postgres://"]

    /// The URI with the password (in the userinfo, or a `password=` query parameter) replaced by `***`.
    /// Hand-written rather than through `URLComponents`: it must redact even what `URLComponents` refuses to parse (an
    /// unencoded `@`, `%`, `?`, `#` or space in a password), since a failed parse must not fall back to showing the text.
    ///
    /// It splits the way libpq does (`conninfo_uri_parse_options`): the userinfo is everything before the first `@`
    /// that comes before any `/` (a `?` or `#` there is part of the password, not a query), so `u:p?ss@h/db` has the
    /// password `p?ss`. Generously, it runs on to the last `@` before the next `/`, so an unencoded `@` in a password
    /// (which libpq would misread) is hidden too. The query starts at the first `?` after the userinfo.
    public var description: String {
        guard let scheme = Self.schemes.first(where: { rawValue.hasPrefix($0) }) else { return "postgresql://***" }
        var rest = Substring(rawValue.dropFirst(scheme.count))
        var userinfo = ""
        if let firstAt = rest.firstIndex(of: "@"), Self.mayBeUserinfo(rest[..<firstAt]) {
            let slash = rest[firstAt...].firstIndex(of: "/") ?? rest.endIndex
            let lastAt = rest[..<slash].lastIndex(of: "@")!
            let credentials = rest[..<lastAt]
            userinfo = (credentials.firstIndex(of: ":").map { credentials[..<$0] + ":***" } ?? String(credentials)) + "@"
            rest = rest[rest.index(after: lastAt)...]
        }
        var query = ""
        if let mark = rest.firstIndex(of: "?") {
            query = Self.redactingQuery(rest[mark...])
            rest = rest[..<mark]
        }
        return scheme + userinfo + rest + query
    }

    /// Whether the text before the first `@` is a userinfo: libpq's rule (no `/` in it), or, generously, a password
    /// with an unencoded `/` (no query can have started: no `?` and no `=` in it).
    private static func mayBeUserinfo(_ text: Substring) -> Bool {
        !text.contains("/") || !text.contains(where: { $0 == "?" || $0 == "=" })
    }

    /// `?a=b&password=x` → `?a=b&password=***`.
    private static func redactingQuery(_ query: Substring) -> String {
        let pairs = query.dropFirst().split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            pair.lowercased().hasPrefix("password=") ? "password=***" : String(pair)
        }
        return "?" + pairs.joined(separator: "&")
    }
}
