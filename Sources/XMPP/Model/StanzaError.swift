import IsthmusCommon
import XMLStream

/// A stanza error (RFC 6120 §8.3): `<error type='…' by='…'><condition xmlns='…stanzas'/><text>…</text></error>`.
public struct StanzaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// How the sender should react (RFC 6120 §8.3.2).
    public enum ErrorType: String, Sendable, Hashable {
        case auth, cancel, `continue`, modify, wait
    }

    /// How to react (retry, give up, fix the request, authenticate).
    public var type: ErrorType
    /// The defined condition, e.g. `conflict`.
    public var condition: StanzaErrorCondition
    /// Human-readable text, if any.
    public var text: String?
    /// The entity that generated the error, if said.
    public var by: JID?
    /// Application-specific condition elements (anything else inside `<error>`).
    public var applicationConditions: [XElement]

    public init(
        type: ErrorType, condition: StanzaErrorCondition, text: String? = nil, by: JID? = nil,
        applicationConditions: [XElement] = []
    ) {
        self.type = type
        self.condition = condition
        self.text = text
        self.by = by
        self.applicationConditions = applicationConditions
    }

    /// Reads `<error>` (in the stanza's namespace `stanzaNamespace`).
    public init(element: XElement) throws(StanzaParseError) {
        let typeText = try element.required("type")
        guard let type = ErrorType(rawValue: typeText) else {
            throw StanzaParseError(element: "error", .invalidValue(field: "type", value: typeText))
        }
        self.type = type
        by = try element.jid("by")
        var condition: StanzaErrorCondition?
        applicationConditions = []
        for child in element.elements {
            if child.namespace == XMPPNamespace.stanzaErrors {
                if child.name == "text" { text = child.text } else if condition == nil { condition = StanzaErrorCondition(child.name) }
            } else {
                applicationConditions.append(child)
            }
        }
        self.condition = condition ?? .undefinedCondition
    }

    /// The `<error>` element, in `namespace` (the stanza's).
    public func element(namespace: String = XMPPNamespace.component) -> XElement {
        var error = XElement("error", namespace: namespace, ["type": type.rawValue, "by": by?.description])
        error.append(XElement(condition.rawValue, namespace: XMPPNamespace.stanzaErrors))
        if let text { error.append(XElement("text", namespace: XMPPNamespace.stanzaErrors, children: [.text(text)])) }
        for extra in applicationConditions { error.append(extra) }
        return error
    }

    public var description: String {
        "\(type.rawValue)/\(condition.rawValue)" + (text.map { " (\($0))" } ?? "")
    }
}

/// A defined stanza error condition (RFC 6120 §8.3.3), kept as its element name so unknown ones survive.
public struct StanzaErrorCondition: RawRepresentable, Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The condition's element name.
    public let rawValue: String
    /// The value with this raw name or number.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The value with this raw name or number.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }
    public var description: String { rawValue }

    public static let badRequest = Self("bad-request")
    public static let conflict = Self("conflict")
    public static let featureNotImplemented = Self("feature-not-implemented")
    public static let forbidden = Self("forbidden")
    public static let gone = Self("gone")
    public static let internalServerError = Self("internal-server-error")
    public static let itemNotFound = Self("item-not-found")
    public static let jidMalformed = Self("jid-malformed")
    public static let notAcceptable = Self("not-acceptable")
    public static let notAllowed = Self("not-allowed")
    public static let notAuthorized = Self("not-authorized")
    public static let policyViolation = Self("policy-violation")
    public static let recipientUnavailable = Self("recipient-unavailable")
    public static let redirect = Self("redirect")
    public static let registrationRequired = Self("registration-required")
    public static let remoteServerNotFound = Self("remote-server-not-found")
    public static let remoteServerTimeout = Self("remote-server-timeout")
    public static let resourceConstraint = Self("resource-constraint")
    public static let serviceUnavailable = Self("service-unavailable")
    public static let subscriptionRequired = Self("subscription-required")
    public static let undefinedCondition = Self("undefined-condition")
    public static let unexpectedRequest = Self("unexpected-request")
}
