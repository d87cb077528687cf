/// The Prometheus text exposition format, version 0.0.4 — the whole of it that Isthmus writes, in one place. Pure.
///
/// Per family: `# HELP name text` (`\` and newline escaped), `# TYPE name counter|gauge|histogram`, then one line per
/// sample: `name{label="value",…} number`. Label values escape `\`, `"` and newline. A histogram's samples are its
/// cumulative `name_bucket{…,le="…"}` lines ending with `le="+Inf"`, then `name_sum` and `name_count`.
/// (https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format)
public enum PrometheusExposition {
    /// The `Content-Type` of a scrape answer.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// One metric family as exposed: name, help, type and its samples.
    public struct Family: Sendable, Equatable {
        public enum Kind: String, Sendable { case counter, gauge, histogram }
        public var name: String
        public var help: String
        public var kind: Kind
        public var samples: [Sample]

        public init(name: String, help: String, kind: Kind, samples: [Sample]) {
            self.name = name
            self.help = help
            self.kind = kind
            self.samples = samples
        }
    }

    /// One labelled value of a family.
    public struct Sample: Sendable, Equatable {
        public enum Value: Sendable, Equatable {
            case number(Double)
            /// Per-bucket counts (not cumulative) for the upper bounds, the count above the last bound, sum and count.
            case histogram(HistogramValue)
        }
        /// Label names and values, in the order written.
        public var labels: [(name: String, value: String)]
        public var value: Value

        public init(labels: [(name: String, value: String)] = [], value: Value) {
            self.labels = labels
            self.value = value
        }

        public static func == (lhs: Sample, rhs: Sample) -> Bool {
            lhs.value == rhs.value && lhs.labels.elementsEqual(rhs.labels) { $0.name == $1.name && $0.value == $1.value }
        }
    }

    /// A histogram's state: observations per bucket (each counted once, in the first bucket whose bound holds it).
    public struct HistogramValue: Sendable, Equatable {
        public var upperBounds: [Double]
        /// `upperBounds.count + 1` counts: the last one is for observations above every bound.
        public var bucketCounts: [UInt64]
        public var sum: Double

        public init(upperBounds: [Double], bucketCounts: [UInt64], sum: Double) {
            self.upperBounds = upperBounds
            self.bucketCounts = bucketCounts
            self.sum = sum
        }

        public var count: UInt64 { bucketCounts.reduce(0, +) }
    }

    /// The text of `families`, in order, each line ending with a newline.
    public static func render(_ families: [Family]) -> String {
        var text = ""
        for family in families {
            text += "# HELP \(family.name) \(escapeHelp(family.help))\n"
            text += "# TYPE \(family.name) \(family.kind.rawValue)\n"
            for sample in family.samples {
                switch sample.value {
                case .number(let value):
                    text += "\(family.name)\(labelSet(sample.labels)) \(format(value))\n"
                case .histogram(let histogram):
                    var cumulative: UInt64 = 0
                    for (index, bound) in histogram.upperBounds.enumerated() {
                        cumulative += histogram.bucketCounts[index]
                        text += "\(family.name)_bucket\(labelSet(sample.labels + [("le", format(bound))])) \(cumulative)\n"
                    }
                    text += "\(family.name)_bucket\(labelSet(sample.labels + [("le", "+Inf")])) \(histogram.count)\n"
                    text += "\(family.name)_sum\(labelSet(sample.labels)) \(format(histogram.sum))\n"
                    text += "\(family.name)_count\(labelSet(sample.labels)) \(histogram.count)\n"
                }
            }
        }
        return text
    }

    /// `{a="x",b="y"}`, or nothing without labels.
    static func labelSet(_ labels: [(name: String, value: String)]) -> String {
        guard !labels.isEmpty else { return "" }
        return "{" + labels.map { "\($0.name)=\"\(escapeLabelValue($0.value))\"" }.joined(separator: ",") + "}"
    }

    /// A label value: `\` → `\\`, `"` → `\"`, newline → `\n`.
    public static func escapeLabelValue(_ value: String) -> String {
        var escaped = ""
        for character in value.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// A HELP text: `\` → `\\`, newline → `\n`.
    public static func escapeHelp(_ text: String) -> String {
        var escaped = ""
        for character in text.unicodeScalars {
            switch character {
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// A sample value: whole numbers without a fraction (`3`), others in Swift's shortest round-trip form (`0.25`,
    /// `1e-05`, both of which Prometheus parses), and `+Inf`, `-Inf`, `NaN`.
    public static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
