/// A parsed XEP-0393 block (XEP-0393 "Business Rules › Blocks"): a plain line of spans, a quotation holding child
/// blocks, or a preformatted block holding its lines verbatim.
indirect enum StylingBlock: Equatable, Sendable {
    /// A plain block: one line, parsed into spans.
    case line([StylingSpan])
    /// A quotation's child blocks, parsed from its lines without their `>` and first white space character.
    case quote([StylingBlock])
    /// The lines between the opening "```" line and the closing one (or the end of the parent block).
    case preformatted([String])
}

/// A parsed XEP-0393 span ("Business Rules › Spans"): plain text, or a styled span without its directives.
indirect enum StylingSpan: Equatable, Sendable {
    /// Text shown as is (including directives that did not open or close a span).
    case plain(String)
    /// A span's content (a preformatted span holds a single `.plain`).
    case styled(SpanStyle, [StylingSpan])
}

/// The XEP-0393 (Message Styling, `urn:xmpp:styling:0`) parser: blocks first, then the spans of each plain line.
/// Pure; no I/O.
///
/// Our reading of the rules, where the XEP leaves room:
/// - A quotation is a run of lines starting with `>`; one leading white space character after the `>` is trimmed
///   before the child blocks are parsed. Quotations nest at most ``maximumQuoteDepth`` deep; deeper `>` are text.
/// - A preformatted block starts at a line beginning with "```" (the rest of that line is ignored) and ends at a
///   line that is exactly "```" or at the end of its parent block.
/// - A span opens at a directive that is at the start of the line, after white space, or right after a *different*
///   opening directive, and is not followed by white space. It closes at the first (lazy) later instance of the
///   same directive that is not preceded by white space and leaves the span non-empty. A directive right after
///   the same character does not close: the XEP's example "****" styles nothing. Spans never cross lines; a
///   preformatted span holds plain text only; a style never nests inside itself.
enum StylingParser {
    /// How many quotations may nest before further `>` are plain text (keeps the recursion bounded).
    static let maximumQuoteDepth = 32

    /// Splits `body` into blocks.
    static func blocks(_ body: String) -> [StylingBlock] {
        // "\r\n" is one Character in Swift: split on it too, or CRLF bodies would be one long line.
        let lines = body.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        return blocks(lines[...], depth: 0)
    }

    private static func blocks(_ lines: ArraySlice<Substring>, depth: Int) -> [StylingBlock] {
        var result: [StylingBlock] = []
        var index = lines.startIndex
        while index < lines.endIndex {
            let line = lines[index]
            if line.utf8.starts(with: "```".utf8) {
                var end = index + 1
                while end < lines.endIndex, lines[end] != "```" { end += 1 }
                result.append(.preformatted(lines[(index + 1)..<end].map(String.init)))
                index = end + 1
            } else if line.utf8.first == UInt8(ascii: ">"), depth < maximumQuoteDepth {
                var end = index
                var children: [Substring] = []
                while end < lines.endIndex, lines[end].utf8.first == UInt8(ascii: ">") {
                    var child = lines[end].unicodeScalars.dropFirst()
                    if let first = child.first, first.isStylingWhitespace { child = child.dropFirst() }
                    children.append(Substring(child))
                    end += 1
                }
                result.append(.quote(blocks(children[...], depth: depth + 1)))
                index = end
            } else {
                result.append(.line(spans(line)))
                index += 1
            }
        }
        return result
    }

    /// Parses the spans of one plain line.
    static func spans(_ line: Substring) -> [StylingSpan] {
        let scalars = Array(line.unicodeScalars)
        let closers = Closers(scalars)
        return spans(scalars[...], enclosing: [], closers: closers)
    }

    private static func spans(
        _ text: ArraySlice<Unicode.Scalar>, enclosing: Set<SpanStyle>, closers: Closers
    ) -> [StylingSpan] {
        var result: [StylingSpan] = []
        var plainStart = text.startIndex
        var index = text.startIndex
        while index < text.endIndex {
            guard let style = SpanStyle(directive: text[index]), !enclosing.contains(style),
                  canOpen(text, at: index),
                  let close = closers.first(style, from: index + 2, before: text.endIndex)
            else {
                index += 1
                continue
            }
            if plainStart < index { result.append(.plain(String(scalars: text[plainStart..<index]))) }
            let content = text[(index + 1)..<close]
            let children = style == .code
                ? [StylingSpan.plain(String(scalars: content))]
                : spans(content, enclosing: enclosing.union([style]), closers: closers)
            result.append(.styled(style, children))
            index = close + 1
            plainStart = index
        }
        if plainStart < text.endIndex { result.append(.plain(String(scalars: text[plainStart..<text.endIndex]))) }
        return result
    }

    /// XEP-0393 "Business Rules › Spans": at the start of the line (or of the enclosing span's content, i.e. right
    /// after a different opening directive) or after white space, and not followed by white space.
    private static func canOpen(_ text: ArraySlice<Unicode.Scalar>, at index: Int) -> Bool {
        let next = index + 1
        guard next < text.endIndex, !text[next].isStylingWhitespace else { return false }
        return index == text.startIndex || text[index - 1].isStylingWhitespace
    }

    /// For each directive, the ascending positions where it may close a span (not after white space, not after
    /// itself), found once per line so that matching stays O(n log n) however many directives fail to open.
    struct Closers {
        private var positions: [SpanStyle: [Int]] = [:]

        init(_ scalars: [Unicode.Scalar]) {
            for index in scalars.indices.dropFirst() {
                guard let style = SpanStyle(directive: scalars[index]) else { continue }
                let previous = scalars[index - 1]
                guard !previous.isStylingWhitespace, previous != scalars[index] else { continue }
                positions[style, default: []].append(index)
            }
        }

        /// The first closing position `p` of `style` with `lowest <= p < end`, if any (callers pass the opening
        /// position + 2: content may not be empty).
        func first(_ style: SpanStyle, from lowest: Int, before end: Int) -> Int? {
            guard let list = positions[style] else { return nil }
            var low = 0
            var high = list.count
            while low < high {
                let middle = (low + high) / 2
                if list[middle] < lowest { low = middle + 1 } else { high = middle }
            }
            guard low < list.count, list[low] < end else { return nil }
            return list[low]
        }
    }
}

extension String {
    fileprivate init(scalars: ArraySlice<Unicode.Scalar>) {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        self = String(view)
    }
}
