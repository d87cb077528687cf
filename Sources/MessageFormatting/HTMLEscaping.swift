/// Escaping for text placed in HTML element content (Matrix `formatted_body`). Pure.
public enum HTMLEscaping {
    /// `&`, `<`, `>`, `"` and `'` as character references; everything else unchanged.
    public static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else {
            return text
        }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `text` escaped, with LF, CRLF and lone CR each as `<br>` (plain text as the HTML of a `formatted_body`).
    public static func escapedLines(_ text: String) -> String {
        MentionPill.escapedLines(text)
    }
}
