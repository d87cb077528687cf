/// Why an element could not be read as a typed stanza or payload.
public struct StanzaParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public enum Reason: Sendable, Hashable {
        /// A required attribute is absent.
        case missingAttribute(String)
        /// An attribute that must be a JID is not one.
        case invalidJID(attribute: String, value: String)
        /// An attribute or child has a value outside what the spec allows.
        case invalidValue(field: String, value: String)
        /// The element is not the one expected here.
        case unexpectedElement(name: String, namespace: String)
    }

    /// The element being read, e.g. `message` or `item`.
    public var element: String
    /// What was wrong with it.
    public var reason: Reason

    /// An error reading `element`.
    public init(element: String, _ reason: Reason) {
        self.element = element
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .missingAttribute(let name): "<\(element)> lacks the '\(name)' attribute"
        case .invalidJID(let attribute, let value): "<\(element) \(attribute)='\(value)'> is not a valid JID"
        case .invalidValue(let field, let value): "<\(element)> has an invalid \(field) '\(value)'"
        case .unexpectedElement(let name, let namespace): "expected <\(element)>, got <\(name) xmlns='\(namespace)'>"
        }
    }
}
