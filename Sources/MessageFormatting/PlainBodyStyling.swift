/// Matrix → XMPP for a message without `formatted_body`: whether its plain `body` would be styled by an XMPP client.
///
/// A Matrix client that renders Markdown sends `formatted_body` when the user formatted something, so a bare `body`
/// was meant literally; if an XMPP client would still style it (XEP-0393 has no escape mechanism), the bridge adds
/// `<unstyled xmlns='urn:xmpp:styling:0'/>` (XEP-0393 "Disabling Styling"; RICH.md §1 "Mapping rules"). Pure; no I/O.
public enum PlainBodyStyling {
    /// True when ``StylingParser`` finds a styled span, a quotation or a preformatted block in `body` — exactly when
    /// ``StylingToHTML/convert(_:unstyled:)`` would return HTML for it. Bodies without any of `* _ ~ \` >` are
    /// answered without parsing.
    public static func needsUnstyled(_ body: String) -> Bool {
        guard body.utf8.contains(where: isDirectiveByte) else { return false }
        return StylingParser.blocks(body).contains { block in
            switch block {
            case .quote, .preformatted: true
            case .line(let spans): spans.contains { if case .styled = $0 { true } else { false } }
            }
        }
    }

    /// The bytes that can start a XEP-0393 span or block: `*`, `_`, `~`, `` ` ``, `>`.
    private static func isDirectiveByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "*") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
            || byte == UInt8(ascii: "`") || byte == UInt8(ascii: ">")
    }
}
