/// Matrix → XMPP: the quoted fallback of a reply, for XMPP clients without XEP-0461 (Message Replies).
///
/// Shaped like slixmpp's `Reply.add_quoted_fallback` (plugins/xep_0461): a `> Nick:` line, then each excerpt line
/// prefixed with "> ", each line ending in "\n"; the bridge prepends it to the reply body and marks it with
/// `<fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'><body start='…' end='…'/></fallback>` (XEP-0428)
/// using the returned range, so that XEP-0461 clients hide it. Pure; no I/O.
///
/// **No Matrix id may appear in an XMPP body** (bifrost #228). This type does not look at what it quotes: the caller
/// passes the replied-to author's MUC nick (never a Matrix user id or display name taken from Matrix) and a plain
/// text excerpt of the original as the XMPP side saw it (its XMPP body, or the XEP-0393 text the bridge made from its
/// `formatted_body`, with any fallback of its own removed) — never a Matrix `body`, which may carry ids.
public enum ReplyQuote {
    /// How many excerpt lines are quoted at most; further lines become "…".
    public static let maximumLines = 3
    /// How many code points of excerpt text (after trimming, before the "…") are quoted at most.
    public static let maximumScalars = 200

    /// The quote to prepend and the code points it occupies (`0..<text.unicodeScalars.count`).
    ///
    /// - Parameters:
    ///   - nick: the author's MUC nick; line breaks in it become spaces. Empty: no `> Nick:` line.
    ///   - excerpt: the original's text. Split at line breaks (LF, CR, CRLF, VT, FF, NEL, U+2028, U+2029, so no
    ///     line can escape its "> "); each line is trimmed of white space and blank lines are skipped. At most
    ///     ``maximumLines`` lines and ``maximumScalars`` code points are kept, cut at a grapheme-cluster boundary
    ///     (an emoji sequence or accented letter is kept whole or left out); a cut is marked by appending "…" to
    ///     the last kept line.
    /// - Returns: `text` such as `"> Alice:\n> hello\n"` and its range. Both nick and excerpt empty: `("", 0..<0)`,
    ///   and the caller sends no fallback.
    public static func make(nick: String, excerpt: String) -> (text: String, range: Range<Int>) {
        var text = ""
        let cleanNick = String(String.UnicodeScalarView(nick.unicodeScalars.map { isLineBreak($0) ? " " : $0 }))
        if !cleanNick.isEmpty { text += "> \(cleanNick):\n" }
        for line in excerptLines(excerpt) { text += "> \(line)\n" }
        return (text, 0..<text.unicodeScalars.count)
    }

    /// The excerpt's lines to quote, already cut and marked. Reads only as far as it needs: a huge excerpt costs
    /// no more than its first few lines.
    static func excerptLines(_ excerpt: String) -> [String] {
        var lines: [String] = []
        var budget = maximumScalars
        var cut = false
        var rest = excerpt.unicodeScalars[...]
        while !rest.isEmpty {
            let end = rest.firstIndex(where: isLineBreak) ?? rest.endIndex
            let line = trimmed(rest[..<end])
            rest = end < rest.endIndex ? rest[rest.index(after: end)...] : rest[end...]
            if line.isEmpty { continue }
            if lines.count == maximumLines {
                cut = true
                break
            }
            let (kept, complete) = prefix(of: line, scalars: budget)
            if !kept.isEmpty { lines.append(kept) }
            budget -= kept.unicodeScalars.count
            if !complete {
                cut = true
                break
            }
        }
        if cut {
            if lines.isEmpty { lines.append("…") } else { lines[lines.count - 1] += "…" }
        }
        return lines
    }

    /// The longest prefix of `line` of whole grapheme clusters with at most `scalars` code points, and whether it
    /// is all of `line`.
    private static func prefix(of line: String, scalars limit: Int) -> (String, Bool) {
        var count = 0
        var end = line.startIndex
        for character in line {
            let size = character.unicodeScalars.count
            guard count + size <= limit else { return (String(line[..<end]).trimmingTrailingWhitespace(), false) }
            count += size
            end = line.index(after: end)
        }
        return (line, true)
    }

    private static func trimmed(_ scalars: Substring.UnicodeScalarView) -> String {
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }

    private static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\n" || scalar == "\r" || scalar == "\u{0B}" || scalar == "\u{0C}" || scalar == "\u{85}"
            || scalar == "\u{2028}" || scalar == "\u{2029}"
    }
}

extension String {
    fileprivate func trimmingTrailingWhitespace() -> String {
        guard let last = unicodeScalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(unicodeScalars[...last])
    }
}
