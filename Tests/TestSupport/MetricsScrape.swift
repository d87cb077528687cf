import Foundation

/// A scrape of the bridge's operations listener (`GET /metrics`), parsed: each sample line's `name{labels}` as
/// written (labels in the bridge's order) to its value. Comment lines are checked for shape and skipped.
public struct MetricsScrape: Sendable {
    public var samples: [String: Double]
    /// The raw text.
    public var text: String

    /// Parses Prometheus text format 0.0.4 as the bridge writes it; throws on a line that is not a comment or a sample.
    public init(_ text: String) throws {
        self.text = text
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") { continue }
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...].replacingOccurrences(of: "+Inf", with: "inf")) else {
                throw Malformed(line: String(line))
            }
            samples[String(line[..<space])] = value
        }
        self.samples = samples
    }

    /// `GET http://127.0.0.1:<port>/metrics`.
    public static func fetch(port: Int) async throws -> MetricsScrape {
        let response = try await RawHTTP.request("GET", port: port, "/metrics")
        guard response.status == 200 else { throw Malformed(line: "status \(response.status): \(response.text)") }
        return try MetricsScrape(response.text)
    }

    /// The value of `series` (e.g. `isthmus_messages_total{direction="xmpp_to_matrix",kind="text"}`), 0 when absent.
    public subscript(_ series: String) -> Double { samples[series] ?? 0 }

    /// A line that is neither a comment nor a sample.
    public struct Malformed: Error, CustomStringConvertible {
        public var line: String
        public var description: String { "not a metrics line: \(line)" }
    }
}
