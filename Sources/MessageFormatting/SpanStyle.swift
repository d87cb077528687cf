/// The four XEP-0393 span styles (XEP-0393 "Business Rules › Spans"), keyed by their styling directive character.
enum SpanStyle: Character, CaseIterable, Sendable {
    /// `*strong*` ↔ `<strong>`.
    case strong = "*"
    /// `_emphasis_` ↔ `<em>`.
    case emphasis = "_"
    /// `~strike through~` ↔ `<del>`.
    case strike = "~"
    /// `` `preformatted span` `` ↔ `<code>`; holds plain text only.
    case code = "`"

    /// The directive as a Unicode scalar.
    var directive: Unicode.Scalar { rawValue.unicodeScalars.first! }

    /// The style a directive character opens, if it is one.
    init?(directive: Unicode.Scalar) {
        self.init(rawValue: Character(directive))
    }

    /// The HTML element Matrix clients render for this style (client-server API, "m.room.message msgtypes", HTML subset).
    var htmlTag: String {
        switch self {
        case .strong: "strong"
        case .emphasis: "em"
        case .strike: "del"
        case .code: "code"
        }
    }
}

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
