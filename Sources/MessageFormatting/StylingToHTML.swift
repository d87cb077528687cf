/// XMPP → Matrix: the `formatted_body` (`format: org.matrix.custom.html`) equivalent of an XEP-0393 styled body.
///
/// Follows XEP-0393 (Message Styling) "Business Rules" as read by ``StylingParser`` and emits only tags from the
/// Matrix client-server API's HTML subset ("m.room.message msgtypes" → "m.text", the `formatted_body` allow-list):
/// `strong`, `em`, `del`, `code`, `pre`, `blockquote`, `br`. Pure; no I/O; runs on the caller's executor.
public enum StylingToHTML {
    /// The HTML for `body`, or nil when there is nothing to style — no span, quotation or preformatted block — or
    /// when the message carried `<unstyled xmlns='urn:xmpp:styling:0'/>` (XEP-0393 "Disabling Styling"), so the
    /// bridge sends `body` alone. The directives themselves are dropped (`*a*` → `<strong>a</strong>`); every text
    /// character is escaped (`&`, `<`, `>`, `"`, `'`); line breaks become `<br>` (none around block elements).
    /// The caller strips XEP-0428 fallback ranges first and keeps `body` byte-exact.
    public static func convert(_ body: String, unstyled: Bool = false) -> String? {
        guard !unstyled else { return nil }
        let blocks = StylingParser.blocks(body)
        guard blocks.contains(where: \.isStyled) else { return nil }
        var html = ""
        append(blocks, to: &html)
        return html
    }

    /// Blank lines at the start and end of a block list (the whole body or a quotation) are left out.
    private static func append(_ allBlocks: [StylingBlock], to html: inout String) {
        guard let first = allBlocks.firstIndex(where: { !$0.isBlankLine }),
              let last = allBlocks.lastIndex(where: { !$0.isBlankLine })
        else { return }
        let blocks = Array(allBlocks[first...last])
        var afterLine = false
        for (index, block) in blocks.enumerated() {
            switch block {
            case .line(let spans):
                // A blank line beside a quotation or code block is the gap those already render with.
                let previous = index > 0 ? blocks[index - 1] : nil
                let next = index + 1 < blocks.count ? blocks[index + 1] : nil
                if spans.isEmpty, previous?.isLine == false || next?.isLine == false { continue }
                if afterLine { html += "<br>" }
                append(spans, to: &html)
                afterLine = true
            case .quote(let children):
                html += "<blockquote>"
                append(children, to: &html)
                html += "</blockquote>"
                afterLine = false
            case .preformatted(let lines):
                html += "<pre><code>"
                html += HTMLEscaping.escape(lines.joined(separator: "\n"))
                html += "</code></pre>"
                afterLine = false
            }
        }
    }

    private static func append(_ spans: [StylingSpan], to html: inout String) {
        for span in spans {
            switch span {
            case .plain(let text):
                html += HTMLEscaping.escape(text)
            case .styled(let style, let children):
                html += "<\(style.htmlTag)>"
                append(children, to: &html)
                html += "</\(style.htmlTag)>"
            }
        }
    }
}

extension StylingBlock {
    fileprivate var isLine: Bool {
        if case .line = self { return true }
        return false
    }

    fileprivate var isBlankLine: Bool {
        if case .line(let spans) = self { return spans.isEmpty }
        return false
    }

    /// Whether the block, or any span or block inside it, carries styling.
    fileprivate var isStyled: Bool {
        switch self {
        case .quote, .preformatted: true
        case .line(let spans): spans.contains { if case .styled = $0 { true } else { false } }
        }
    }
}
