import IsthmusCommon
import XMLStream

/// Typed attribute reads shared by the stanza and payload parsers.
extension XElement {
    /// The attribute `name` as a JID: nil when absent, a ``StanzaParseError`` when present but invalid.
    func jid(_ name: String) throws(StanzaParseError) -> JID? {
        guard let text = self[attribute: name] else { return nil }
        guard let jid = JID(text) else { throw StanzaParseError(element: self.name, .invalidJID(attribute: name, value: text)) }
        return jid
    }

    /// The attribute `name`, which must be present.
    func required(_ name: String) throws(StanzaParseError) -> String {
        guard let value = self[attribute: name] else { throw StanzaParseError(element: self.name, .missingAttribute(name)) }
        return value
    }

    /// Checks that this element is `name` in `namespace`.
    func expect(_ name: String, _ namespace: String) throws(StanzaParseError) {
        guard self.name == name, self.namespace == namespace else {
            throw StanzaParseError(element: name, .unexpectedElement(name: self.name, namespace: self.namespace))
        }
    }

    /// The text of the child `name` in `namespace`, if that child exists.
    func childText(_ name: String, _ namespace: String) -> String? {
        child(name, namespace: namespace)?.text
    }
}
