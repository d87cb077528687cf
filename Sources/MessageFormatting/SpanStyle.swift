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
