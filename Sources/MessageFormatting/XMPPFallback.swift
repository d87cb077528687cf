/// XMPP → Matrix: removes the XEP-0428 (Fallback Indication, `urn:xmpp:fallback:0`) parts of a message body, e.g. the
/// "> Nick:\n> quoted\n" a XEP-0461 reply carries for clients that do not understand `<reply>`. Pure; no I/O.
public enum XMPPFallback {
    /// `body` without the code points in `ranges`.
    ///
    /// - Parameters:
    ///   - ranges: the `<body/>` ranges of the `<fallback for='…'>` elements the bridge understands (the caller
    ///     picks them by `for`). Offsets count Unicode scalars (XEP-0426), so an emoji outside the BMP is 1, not 2,
    ///     and a letter with a combining accent is 2. Unsorted, overlapping, empty, reversed and out-of-bounds
    ///     ranges are fine: they are clamped to the body and merged, empty or reversed ones are ignored (see
    ///     ``CodePointRanges``). `nil` means the whole body is fallback (the result is empty); `[]` removes nothing.
    ///   - body: the message `<body>` text.
    /// - Returns: the remaining text. A range may end inside a grapheme cluster; the scalars outside it are kept
    ///   as they are.
    public static func removing(ranges: [CodePointRange]?, from body: String) -> String {
        guard let ranges else { return "" }
        guard !ranges.isEmpty else { return body }
        let scalars = body.unicodeScalars
        let normalized = CodePointRanges(ranges, scalarCount: scalars.count).ranges
        guard !normalized.isEmpty else { return body }
        var result = String.UnicodeScalarView()
        var offset = 0
        var index = scalars.startIndex
        for range in normalized {
            while offset < range.lowerBound {
                result.append(scalars[index])
                index = scalars.index(after: index)
                offset += 1
            }
            while offset < range.upperBound {
                index = scalars.index(after: index)
                offset += 1
            }
        }
        result.append(contentsOf: scalars[index...])
        return String(result)
    }
}
