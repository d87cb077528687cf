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

    /// `sqlite` or `postgresql`, for logs and `doctor`.
    public var backendName: String {
        switch self {
        case .sqlite: "sqlite"
        case .postgres: "postgresql"
        }
    }
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

    /// The URI with the password (in the authority, or a `password=` query parameter) replaced by `***`.
    /// Hand-written rather than through `URLComponents`: it must redact even what `URLComponents` refuses to parse (an
    /// unencoded `@`, `%` or space in a password), since a failed parse must not fall back to showing the text.
    public var description: String {
        guard let scheme = Self.schemes.first(where: { rawValue.hasPrefix($0) }) else { return "postgresql://***" }
        var rest = Substring(rawValue.dropFirst(scheme.count))
        var query = ""
        if let mark = rest.firstIndex(of: "?") {
            query = Self.redactingQuery(rest[mark...])
            rest = rest[..<mark]
        }
        // The authority ends at the first "/"; its userinfo at the last "@" within it (a password may hold "@"? libpq
        // wants it percent-encoded, but redact generously).
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        let path = rest[authorityEnd...]
        if let at = authority.lastIndex(of: "@") {
            let userinfo = authority[..<at]
            if let colon = userinfo.firstIndex(of: ":") {
                authority = userinfo[..<colon] + ":***" + authority[at...]
            }
        }
        return scheme + authority + path + query
    }

    /// `?a=b&password=x` → `?a=b&password=***`.
    private static func redactingQuery(_ query: Substring) -> String {
        let pairs = query.dropFirst().split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            pair.lowercased().hasPrefix("password=") ? "password=***" : String(pair)
        }
        return "?" + pairs.joined(separator: "&")
    }
}
