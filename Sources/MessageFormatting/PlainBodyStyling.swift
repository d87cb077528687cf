/// Matrix → XMPP for a message without `formatted_body`: whether its plain `body` would be styled by an XMPP client.
///
/// A Matrix client that renders Markdown sends `formatted_body` when the user formatted something, so a bare `body`
/// was meant literally; if an XMPP client would still style it (XEP-0393 has no escape mechanism), the bridge adds
/// `<unstyled xmlns='urn:xmpp:styling:0'/>` (XEP-0393 "Disabling Styling"; RICH.md §1 "Mapping rules"). Pure; no I/O.
public enum PlainBodyStyling {
    /// True when ``StylingParser`` finds a styled span, a quotation or a preformatted block in `body` — exactly when
    /// ``StylingToHTML/convert(_:unstyled:)`` would return HTML for it — or would find one once CRLF and lone CR
    /// are read as line breaks (an XML parser turns a raw CR LF into LF, XML 1.0 §2.11, so a client may see
    /// lines where ``StylingParser``, which splits at `Character` "\n" only, sees one). Saying yes once too often
    /// only costs an `<unstyled/>` element. Bodies without any of `* _ ~ \` >` are answered without parsing, and
    /// parsing stops at the first styled line.
    public static func needsUnstyled(_ body: String) -> Bool {
        guard body.utf8.contains(where: isDirectiveByte) else { return false }
        if isStyled(body) { return true }
        guard body.utf8.contains(UInt8(ascii: "\r")) else { return false }
        return isStyled(normalizingLineBreaks(body))
    }

    /// `StylingParser.blocks(body)` holds a styled block, decided line by line: at the top level a line starting
    /// with "```" opens a preformatted block and one starting with `>` a quotation (both styled), and any other line
    /// is a plain block whose spans are parsed on their own — the same split and order as ``StylingParser``.
    static func isStyled(_ body: String) -> Bool {
        for line in body.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.utf8.starts(with: "```".utf8) || line.utf8.first == UInt8(ascii: ">") { return true }
            if StylingParser.spans(line).contains(where: { if case .styled = $0 { true } else { false } }) {
                return true
            }
        }
        return false
    }

    /// `text` with CR LF and lone CR as LF.
    private static func normalizingLineBreaks(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        var previousWasCR = false
        for scalar in text.unicodeScalars {
            if scalar == "\r" {
                result.append("\n")
            } else if scalar != "\n" || !previousWasCR {
                result.append(scalar)
            }
            previousWasCR = scalar == "\r"
        }
        return String(result)
    }

    /// The bytes that can start a XEP-0393 span or block: `*`, `_`, `~`, `` ` ``, `>`.
    private static func isDirectiveByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "*") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
            || byte == UInt8(ascii: "`") || byte == UInt8(ascii: ">")
    }
}
