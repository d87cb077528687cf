/// One `Range: bytes=…` request (RFC 9110 §14.1.2) resolved against a representation of known length. Pure.
///
/// Only single ranges are served: a multi-range request gets the whole representation (RFC 9110 §14.2 lets a
/// server ignore `Range`), as do malformed headers and other units.
public struct ByteRange: Sendable, Equatable {
    /// First and last byte, inclusive.
    public let first: Int64
    public let last: Int64

    public var count: Int64 { last - first + 1 }

    public init(first: Int64, last: Int64) {
        self.first = first
        self.last = last
    }

    /// What a `Range` header asks of a representation of `length` bytes.
    public enum Request: Sendable, Equatable {
        /// Send everything (no header, or one the server ignores).
        case whole
        /// Send this part (206, `Content-Range: bytes first-last/length`).
        case part(ByteRange)
        /// 416, `Content-Range: bytes */length`.
        case unsatisfiable
    }

    /// Reads `header` (nil: no `Range` header) for a representation of `length` bytes.
    public static func parse(_ header: String?, length: Int64) -> Request {
        guard let header else { return .whole }
        let trimmed = header.trimmingWhitespace()
        guard trimmed.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = trimmed.dropFirst(6).trimmingWhitespace()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let start = spec[..<dash].trimmingWhitespace(), end = spec[spec.index(after: dash)...].trimmingWhitespace()
        guard start.allSatisfy(\.isASCIIDigit), end.allSatisfy(\.isASCIIDigit), start.count <= 18, end.count <= 18 else { return .whole }
        if start.isEmpty {
            // A suffix: the last `end` bytes.
            guard let suffix = Int64(end) else { return .whole }
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .part(ByteRange(first: max(0, length - suffix), last: length - 1))
        }
        guard let first = Int64(start) else { return .whole }
        let requestedLast = end.isEmpty ? nil : Int64(end)
        if let requestedLast, requestedLast < first { return .whole }  // invalid: ignored
        guard first < length else { return .unsatisfiable }
        return .part(ByteRange(first: first, last: min(requestedLast ?? (length - 1), length - 1)))
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace, RFC 9110 §5.6.3).
    public func trimmingWhitespace() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
