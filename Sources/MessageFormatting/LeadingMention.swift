/// XMPP → Matrix: the occupant a groupchat body addresses at its start, the way MUC clients write it when a nick is
/// tab-completed: `Nick: text` or `Nick, text` (issue 12 §7; RICH.md §1 "Mentions"). Pure value; no I/O.
public struct LeadingMention: Sendable, Equatable {
    /// The nick matched, exactly as given in the `nicks` list (its case may differ from the body's).
    public let nick: String
    /// Where the nick stands in the body: from its start up to (not including) the `:` or `,`.
    public let range: Range<String.Index>
    /// The same place in Unicode code points (for a XEP-0372 reference's `begin`/`end`): always starts at 0.
    public let codePointRange: Range<Int>

    /// The nick addressed at the start of `body`, or nil.
    ///
    /// A nick matches when `body` starts with it, compared grapheme cluster by grapheme cluster (Swift `Character`
    /// equality, so canonically equivalent spellings match, and a nick `e` does not match the start of `é` written as
    /// `e` + U+0301), directly followed by `:` or `,` and then white space or the end of the body (so `http://…`
    /// does not address an occupant `http`). Nicks may contain spaces, punctuation and emoji.
    ///
    /// Several nicks may match (`Al` and `Al, Bob`): an exact-case match wins over case-insensitive ones; among
    /// matches of the same kind the longest nick wins, then the first in `nicks`. Empty nicks are ignored.
    /// Cost: a prefix comparison per nick, independent of the body's length.
    public static func find(in body: String, nicks: [String]) -> LeadingMention? {
        var best: (nick: String, end: String.Index, length: Int, exact: Bool)?
        for nick in nicks where !nick.isEmpty {
            guard let (end, exact) = match(nick, in: body) else { continue }
            let length = nick.count
            if let current = best {
                if current.exact && !exact { continue }
                if current.exact == exact, current.length >= length { continue }
            }
            best = (nick, end, length, exact)
        }
        guard let best else { return nil }
        let scalars = body.unicodeScalars[body.startIndex..<best.end].count
        return LeadingMention(nick: best.nick, range: body.startIndex..<best.end, codePointRange: 0..<scalars)
    }

    /// Where the nick ends in `body` and whether the case matched exactly, when `body` addresses `nick`.
    private static func match(_ nick: String, in body: String) -> (String.Index, Bool)? {
        var end = body.startIndex
        var exact = true
        for expected in nick {
            guard end < body.endIndex else { return nil }
            let actual = body[end]
            if actual != expected {
                guard actual.lowercased() == expected.lowercased() else { return nil }
                exact = false
            }
            end = body.index(after: end)
        }
        guard end < body.endIndex, body[end] == ":" || body[end] == "," else { return nil }
        let afterSeparator = body.index(after: end)
        guard afterSeparator == body.endIndex || body[afterSeparator].isWhitespace else { return nil }
        return (end, exact)
    }
}
