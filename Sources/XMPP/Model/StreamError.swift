import XMLStream

/// A stream error (RFC 6120 §4.9): `<stream:error><condition xmlns='…streams'/><text>…</text></stream:error>`.
/// After sending or receiving one, the stream is closed.
public struct StreamError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The defined condition, e.g. `not-authorized`.
    public var condition: StreamErrorCondition
    /// Human-readable text, if any.
    public var text: String?

    public init(condition: StreamErrorCondition, text: String? = nil) {
        self.condition = condition
        self.text = text
    }

    /// Reads `<stream:error>`.
    public init(element: XElement) throws(StanzaParseError) {
        try element.expect("error", XMPPNamespace.streams)
        var condition: StreamErrorCondition?
        for child in element.elements where child.namespace == XMPPNamespace.streamErrors {
            if child.name == "text" { text = child.text } else if condition == nil { condition = StreamErrorCondition(child.name) }
        }
        self.condition = condition ?? .undefinedCondition
    }

    /// The `<stream:error>` element (serialize it with the `stream` prefix bound).
    public var element: XElement {
        var error = XElement("error", namespace: XMPPNamespace.streams)
        error.append(XElement(condition.rawValue, namespace: XMPPNamespace.streamErrors))
        if let text { error.append(XElement("text", namespace: XMPPNamespace.streamErrors, children: [.text(text)])) }
        return error
    }

    /// The condition a parser refusal calls for (RFC 6120 §4.9.3 and §11).
    public init(refusal: XMLStreamError) {
        switch refusal.kind {
        case .doctype, .entityDeclaration, .comment, .processingInstruction: condition = .restrictedXML
        case .invalidUTF8: condition = .unsupportedEncoding
        case .stanzaTooLarge, .tooDeep: condition = .policyViolation
        case .textBetweenStanzas, .notWellFormed: condition = .notWellFormed
        }
        text = refusal.message
    }

    public var description: String { condition.rawValue + (text.map { " (\($0))" } ?? "") }
}

/// A stream error condition (RFC 6120 §4.9.3), kept as its element name so unknown ones survive.
public struct StreamErrorCondition: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The condition's element name.
    public let rawValue: String
    /// The value with this raw name or number.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The value with this raw name or number.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let badFormat = Self("bad-format")
    public static let badNamespacePrefix = Self("bad-namespace-prefix")
    public static let conflict = Self("conflict")
    public static let connectionTimeout = Self("connection-timeout")
    public static let hostGone = Self("host-gone")
    public static let hostUnknown = Self("host-unknown")
    public static let improperAddressing = Self("improper-addressing")
    public static let internalServerError = Self("internal-server-error")
    public static let invalidFrom = Self("invalid-from")
    public static let invalidNamespace = Self("invalid-namespace")
    public static let invalidXML = Self("invalid-xml")
    public static let notAuthorized = Self("not-authorized")
    public static let notWellFormed = Self("not-well-formed")
    public static let policyViolation = Self("policy-violation")
    public static let remoteConnectionFailed = Self("remote-connection-failed")
    public static let reset = Self("reset")
    public static let resourceConstraint = Self("resource-constraint")
    public static let restrictedXML = Self("restricted-xml")
    public static let seeOtherHost = Self("see-other-host")
    public static let systemShutdown = Self("system-shutdown")
    public static let undefinedCondition = Self("undefined-condition")
    public static let unsupportedEncoding = Self("unsupported-encoding")
    public static let unsupportedFeature = Self("unsupported-feature")
    public static let unsupportedStanzaType = Self("unsupported-stanza-type")
    public static let unsupportedVersion = Self("unsupported-version")
}
