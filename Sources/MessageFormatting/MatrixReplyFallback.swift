/// Matrix → XMPP: removes the legacy rich-reply fallback of an `m.room.message` that replies to another event.
///
/// Matrix client-server API, "Rich replies › Fallbacks" (removed in v1.13 by MSC2781; clients SHOULD still strip old
/// ones): the `formatted_body` starts with an `<mx-reply>…</mx-reply>` element quoting the original, and the `body`
/// starts with the original's lines each prefixed by "> " (the first one `> <@sender:server> text`, or
/// `> * <@sender:server> text` for an emote), then one blank line, then the reply. Both quote Matrix ids, which must
/// never reach an XMPP body. Pure; no I/O; runs on the caller's executor.
public enum MatrixReplyFallback {
    /// `body` and `formattedBody` without the fallback.
    ///
    /// Only when `formattedBody` starts, after optional HTML white space, with a closed `<mx-reply>` element is
    /// anything removed: the element (and the white space before it) goes from `formattedBody`, and — when `body`
    /// starts with `> <` or `> * <` and has more than one line, as mautrix-go's `TrimReplyFallbackText` requires —
    /// the leading lines of `body` that start with "> " (or are exactly ">"), plus one blank line after them, go from
    /// `body`. Otherwise both are returned unchanged: a user's own "> " quote stays. A `<mx-reply>` that is never
    /// closed is not a fallback (nothing is removed here; ``HTMLToStyling`` drops any `mx-reply` element with its
    /// content anyway, so such a message comes out empty there).
    ///
    /// Why a scan instead of libxml2: the rest of `formattedBody` must be returned as the sender wrote it, and
    /// ``HTMLParser`` reports events, not source offsets. In HTML, `</mx-reply>` is always an end tag (text spells
    /// it `&lt;/mx-reply&gt;`), and the spec forbids a nested `<mx-reply>` (the quoted event's own fallback is
    /// stripped first), so the element ends at the first `</mx-reply>` that balances the `<mx-reply` openings seen
    /// (nesting is counted anyway, for hostile input). This is what mautrix-go's `^<mx-reply>[\s\S]+?</mx-reply>`
    /// does, plus the nesting count and case-insensitivity.
    /// A comment or attribute value holding `</mx-reply>` can end the element early; that only changes what the
    /// sender's own message shows.
    public static func strip(body: String, formattedBody: String?) -> (body: String, formattedBody: String?) {
        guard let formattedBody, let rest = removingLeadingReplyElement(formattedBody) else {
            return (body, formattedBody)
        }
        return (removingQuotedLines(body), rest)
    }

    /// The HTML after a leading `<mx-reply>…</mx-reply>`, or nil when the HTML does not start with a closed one.
    static func removingLeadingReplyElement(_ html: String) -> String? {
        let bytes = html.utf8
        var index = bytes.startIndex
        while index < bytes.endIndex, isHTMLWhitespace(bytes[index]) { index = bytes.index(after: index) }
        guard let afterOpening = openingTagEnd(in: bytes, at: index) else { return nil }
        var depth = 1
        index = afterOpening
        while index < bytes.endIndex {
            guard bytes[index] == UInt8(ascii: "<") else {
                index = bytes.index(after: index)
                continue
            }
            if let end = closingTagEnd(in: bytes, at: index) {
                depth -= 1
                if depth == 0 { return String(html[end...]) }
                index = end
            } else if let end = openingTagEnd(in: bytes, at: index) {
                depth += 1
                index = end
            } else {
                index = bytes.index(after: index)
            }
        }
        return nil
    }

    /// `body` without its leading "> " lines and the one blank line after them (see ``strip(body:formattedBody:)``).
    static func removingQuotedLines(_ body: String) -> String {
        let bytes = body.utf8
        guard bytes.starts(with: "> <".utf8) || bytes.starts(with: "> * <".utf8),
              bytes.contains(UInt8(ascii: "\n"))
        else { return body }
        var lineStart = bytes.startIndex
        while lineStart < bytes.endIndex {
            let newline = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n"))
            var line = bytes[lineStart..<(newline ?? bytes.endIndex)]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            let isQuoted = line.starts(with: "> ".utf8) || line.elementsEqual(">".utf8)
            let isBlank = line.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            guard isQuoted || isBlank else { break }
            guard let newline else { return "" }
            lineStart = bytes.index(after: newline)
            if isBlank { break }  // the one blank line that separates the quote from the reply
        }
        return String(body[lineStart...])
    }

    /// The index after `<mx-reply` and its attributes up to `>`, when an opening tag starts at `index`.
    private static func openingTagEnd(in bytes: String.UTF8View, at index: String.Index) -> String.Index? {
        guard let afterName = tagName(in: bytes, at: index, prefix: "<mx-reply") else { return nil }
        guard afterName < bytes.endIndex else { return nil }
        let next = bytes[afterName]
        guard next == UInt8(ascii: ">") || next == UInt8(ascii: "/") || isHTMLWhitespace(next) else { return nil }
        guard let close = bytes[afterName...].firstIndex(of: UInt8(ascii: ">")) else { return nil }
        return bytes.index(after: close)
    }

    /// The index after `</mx-reply` + optional white space + `>`, when a closing tag starts at `index`.
    private static func closingTagEnd(in bytes: String.UTF8View, at index: String.Index) -> String.Index? {
        guard var cursor = tagName(in: bytes, at: index, prefix: "</mx-reply") else { return nil }
        while cursor < bytes.endIndex, isHTMLWhitespace(bytes[cursor]) { cursor = bytes.index(after: cursor) }
        guard cursor < bytes.endIndex, bytes[cursor] == UInt8(ascii: ">") else { return nil }
        return bytes.index(after: cursor)
    }

    /// The index after `prefix` when `bytes` continue with it at `index`, compared ASCII-case-insensitively.
    private static func tagName(in bytes: String.UTF8View, at index: String.Index, prefix: String) -> String.Index? {
        var cursor = index
        for expected in prefix.utf8 {
            guard cursor < bytes.endIndex, lowercased(bytes[cursor]) == expected else { return nil }
            cursor = bytes.index(after: cursor)
        }
        return cursor
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 0x20 : byte
    }

    /// HTML's white space: space, tab, LF, FF, CR.
    private static func isHTMLWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
    }
}
