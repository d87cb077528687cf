/// Why the stream parser refused the input. Once thrown, the parser stays failed (streams are not resynchronised).
///
/// Everything that completed before the offending bytes has already been handed out as events.
public struct XMLStreamError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public enum Kind: Sendable, Hashable {
        /// A `<!DOCTYPE …>` (internal or external subset). XMPP forbids DTDs (RFC 6120 §11.1).
        case doctype
        /// An entity declaration (`<!ENTITY …>`): billion laughs, XXE (`SYSTEM "file://…"`).
        case entityDeclaration
        /// An XML comment (`<!-- … -->`), forbidden by RFC 6120 §11.1.
        case comment
        /// A processing instruction (`<?target …?>`) other than the XML declaration, forbidden by RFC 6120 §11.1.
        case processingInstruction
        /// Bytes that are not UTF-8 (RFC 6120 §11.6).
        case invalidUTF8
        /// A stanza larger than ``XMLStreamLimits/maxStanzaBytes``.
        case stanzaTooLarge(limit: Int)
        /// Elements nested deeper than ``XMLStreamLimits/maxDepth``.
        case tooDeep(limit: Int)
        /// Non-whitespace character data between stanzas.
        case textBetweenStanzas
        /// Anything else libxml2 rejects (bad syntax, undeclared entity, mismatched tags…), with libxml2's error code.
        case notWellFormed(code: Int)
    }

    /// What kind of input was refused.
    public var kind: Kind
    /// libxml2's message or ours, one line.
    public var message: String
    /// 1-based line of the offending input, when known.
    public var line: Int?
    /// 1-based column of the offending input, when known.
    public var column: Int?

    /// A refusal of `kind`, with a one-line message and where it happened.
    public init(_ kind: Kind, message: String, line: Int? = nil, column: Int? = nil) {
        self.kind = kind
        self.message = message
        self.line = line
        self.column = column
    }

    public var description: String {
        var text = "XML stream error (\(kind)): \(message)"
        if let line { text += " at line \(line)" + (column.map { ", column \($0)" } ?? "") }
        return text
    }
}
