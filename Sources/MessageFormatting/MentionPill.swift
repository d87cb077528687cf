import IsthmusCommon

/// XMPP → Matrix: user pills in `formatted_body` (Matrix client-server API, "User and room mentions": a link to
/// `https://matrix.to/#/@user:server`, together with `m.mentions.user_ids`). Pure; no I/O.
public enum MentionPill {
    /// `<a href="https://matrix.to/#/@user:server">displayText</a>`.
    ///
    /// The id is percent-encoded for the URI fragment as the matrix.to / "Matrix URIs" section asks ("the
    /// identifier … must be encoded"): RFC 3986 unreserved characters and `@ : ! $ + , ; =` stay as they are (so
    /// the usual `@alice:example.org` reads as itself), every other byte of its UTF-8 — including `/ ? # % &` and
    /// the brackets of an IPv6 server name, which matrix.to would otherwise read as separators — becomes `%XX`.
    /// `displayText` is HTML-escaped (`& < > " '`).
    public static func html(for user: UserID, displayText: String) -> String {
        "<a href=\"\(HTMLEscaping.escape(matrixToURL(for: user)))\">\(HTMLEscaping.escape(displayText))</a>"
    }

    /// `https://matrix.to/#/` followed by the percent-encoded user id (see ``html(for:displayText:)``).
    public static func matrixToURL(for user: UserID) -> String {
        var url = "https://matrix.to/#/"
        for byte in user.rawValue.utf8 {
            if isKeptInFragment(byte) {
                url.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                url += "%" + hexDigit(byte >> 4) + hexDigit(byte & 0x0F)
            }
        }
        return url
    }

    /// The `formatted_body` of an XMPP body whose start addresses `user` (found by ``LeadingMention/find(in:nicks:)``
    /// on this same `body`): the pill, then the rest of the body from the `:` or `,` on, converted by
    /// ``StylingToHTML/convert(_:unstyled:)`` when it is styled (`Alice: *hi*` → pill + `: <strong>hi</strong>`),
    /// else HTML-escaped with each line break (LF, CRLF or CR) as `<br>`.
    ///
    /// - Parameters:
    ///   - body: the XMPP body as sent to Matrix as `body` (after removing fallback ranges).
    ///   - mention: the leading mention found in `body`; its range must be a range of `body`.
    ///   - user: the Matrix user the nick stands for (add it to `m.mentions.user_ids` too).
    ///   - displayText: the pill's text; nil shows the nick as written in the body.
    ///   - unstyled: the message carried `<unstyled xmlns='urn:xmpp:styling:0'/>` (XEP-0393 "Disabling Styling").
    public static func formattedBody(
        body: String, mention: LeadingMention, user: UserID, displayText: String? = nil, unstyled: Bool = false
    ) -> String {
        let pill = html(for: user, displayText: displayText ?? String(body[mention.range]))
        let rest = String(body[mention.range.upperBound...])
        if let styled = StylingToHTML.convert(rest, unstyled: unstyled) { return pill + styled }
        return pill + escapedLines(rest)
    }

    /// `text` HTML-escaped, with LF, CRLF and lone CR each as `<br>`.
    static func escapedLines(_ text: String) -> String {
        var html = ""
        var previousWasCR = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r":
                html += "<br>"
                previousWasCR = true
                continue
            case "\n":
                if !previousWasCR { html += "<br>" }
            default:
                html += HTMLEscaping.escape(String(scalar))
            }
            previousWasCR = false
        }
        return html
    }

    /// RFC 3986 `unreserved` plus the `pchar` sub-delimiters Matrix ids use; see ``html(for:displayText:)``.
    private static func isKeptInFragment(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "@"),
             UInt8(ascii: ":"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "+"), UInt8(ascii: ","),
             UInt8(ascii: ";"), UInt8(ascii: "="):
            true
        default:
            false
        }
    }

    private static func hexDigit(_ value: UInt8) -> String {
        String(UnicodeScalar(value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10))
    }
}
