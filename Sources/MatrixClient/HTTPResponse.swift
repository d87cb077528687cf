import Foundation

/// One answer. Pure value.
struct HTTPResponse: Sendable {
    var status: Int
    /// The headers the client reads (`retry-after`), names lowercased.
    var headers: [String: String]
    var body: Data
    /// The HTTP version the answer came in: `1.1` or `2`.
    var httpVersion: String
}
