/// One `<body start='…' end='…'/>` of a XEP-0428 `<fallback>` as it came off the wire: offsets in Unicode code
/// points (scalars) of the message body, `end` exclusive (XEP-0428 §2 defers to XEP-0426 "Character counting in
/// message bodies": count code points, not UTF-16 units or grapheme clusters). May be empty, reversed or out of
/// bounds; ``CodePointRanges`` makes a usable set of it. Pure value.
public struct CodePointRange: Sendable, Hashable {
    /// The first code point of the range (0-based), as sent.
    public var start: Int
    /// The code point after the last one of the range, as sent.
    public var end: Int

    /// A range as sent; nothing is checked here.
    public init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    /// The range of a `<body/>` from its attribute values: an absent `start` means 0 and an absent `end` the end
    /// of the body (XEP-0428: a `<body/>` without them marks the whole body). Nil when a present value is not a
    /// decimal integer (`"abc"`, `""`, `"1e3"`, or too large for `Int`): such an element is ignored, never widened to
    /// the whole body.
    public init?(startAttribute: String?, endAttribute: String?) {
        let start: Int
        let end: Int
        if let startAttribute {
            guard let value = Self.decimal(startAttribute) else { return nil }
            start = value
        } else {
            start = 0
        }
        if let endAttribute {
            guard let value = Self.decimal(endAttribute) else { return nil }
            end = value
        } else {
            end = Int.max
        }
        self.init(start: start, end: end)
    }

    /// `[0-9]+` (an optional leading `-` too: negative offsets are clamped later, not refused) as an `Int`.
    private static func decimal(_ text: String) -> Int? {
        let digits = text.utf8.first == UInt8(ascii: "-") ? text.utf8.dropFirst() : text.utf8[...]
        guard !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        return Int(text)
    }
}

/// A normalized set of code-point ranges of one body: each wire range clamped to `0..<scalarCount`, empty and
/// reversed ones dropped, the rest sorted and merged where they overlap or touch. Pure value.
public struct CodePointRanges: Sendable, Equatable {
    /// Sorted, non-empty, disjoint, non-adjacent ranges within `0..<scalarCount`.
    public let ranges: [Range<Int>]

    /// Normalizes `ranges` for a body of `scalarCount` code points (`body.unicodeScalars.count`).
    public init(_ ranges: [CodePointRange], scalarCount: Int) {
        let limit = max(scalarCount, 0)
        let clamped = ranges.compactMap { range -> Range<Int>? in
            let start = min(max(range.start, 0), limit)
            let end = min(max(range.end, 0), limit)
            return start < end ? start..<end : nil
        }.sorted { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Int>] = []
        for range in clamped {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        self.ranges = merged
    }

    /// Whether `offset` lies in one of the ranges.
    public func contains(_ offset: Int) -> Bool {
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound <= offset { low = middle + 1 } else { high = middle }
        }
        return low < ranges.count && ranges[low].contains(offset)
    }
}
