import IsthmusCommon

/// Naming what is wrong in a connection URL, and keeping its secrets out of errors (``validate(_:)`` asks libpq).
///
/// libpq's own messages about a URL quote it (`invalid percent-encoded token: "…"`, `unexpected character … in URI:
/// "…"`), and a connect error may echo parts of it: neither may reach a log or the terminal with the password in it.
extension PostgresConnection {
    /// What libpq found in a URL, minus anything it quoted: which part is wrong, never the value.
    struct InvalidURL: Error, Sendable, Equatable, CustomStringConvertible {
        /// The part of the URI libpq refused, in words.
        let part: String
        var description: String { "database.url is not a valid PostgreSQL connection URI: \(part)" }
    }

    /// Which part of the URI libpq's (English) message is about; the message itself quotes the URI, so only these
    /// fixed words leave. Hand-written: libpq offers no error code for a parse failure, only the text.
    static func partRefused(libpqMessage message: String) -> String {
        let parts: [(String, String)] = [
            ("percent-encoded", "a percent-encoded character (write \"%\" as %25, and encode \"@\", \"/\", \"?\", \"#\" and \":\" in a password)"),
            ("unexpected character", "an unexpected character after the host (is there an unencoded \"@\", \"/\" or \":\" in the password?)"),
            ("IPv6", "the IPv6 host address"),
            ("separator", "a query parameter (each must be key=value, joined by &)"),
            ("invalid URI query parameter", "an unknown query parameter"),
            ("invalid connection option", "an unknown query parameter"),
            ("port", "the port"),
        ]
        return parts.first { message.contains($0.0) }?.1 ?? "libpq cannot parse it"
    }

    /// `message` with `url` and `password` (as written and percent-decoded) replaced by `***`: for connect errors,
    /// whose text comes from libpq and the server.
    static func scrubbed(_ message: String, url: String, password: String?) -> String {
        var text = message.replacing(url, with: "***")
        if let password, !password.isEmpty {
            text = text.replacing(password, with: "***")
            // As written in a URI's userinfo (percent-encoded, unreserved characters kept).
            let encoded = PercentEncoding.encode(password)
            if encoded != password { text = text.replacing(encoded, with: "***") }
        }
        return text
    }
}

