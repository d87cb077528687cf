// White space as XEP-0393 and HTML each define it.

extension Unicode.Scalar {
    /// XEP-0393 "Glossary": a whitespace character is any scalar with the Unicode property White_Space or in
    /// general category Z.
    var isStylingWhitespace: Bool {
        if isASCII { return value == 0x20 || (0x09...0x0D).contains(value) }
        if properties.isWhitespace { return true }
        switch properties.generalCategory {
        case .spaceSeparator, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }

    /// HTML's inter-element white space (space, tab, LF, FF, CR), which a browser collapses to one space.
    var isHTMLWhitespace: Bool {
        self == " " || self == "\t" || self == "\n" || self == "\u{0C}" || self == "\r"
    }
}

extension String {
    /// Without leading and trailing HTML white space (space, tab, LF, FF, CR).
    func trimmingHTMLWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.isHTMLWhitespace }),
              let last = scalars.lastIndex(where: { !$0.isHTMLWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
