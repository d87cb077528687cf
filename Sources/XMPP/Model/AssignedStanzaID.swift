import IsthmusCommon
import XMLStream

/// XEP-0359 §3: `<stanza-id xmlns='urn:xmpp:sid:0' id='…' by='…'/>`, an id assigned by the entity `by` (a MUC room
/// assigns one to every message it relays; it is also the room's MAM archive id).
public struct AssignedStanzaID: Sendable, Hashable {
    /// The assigned id.
    public var id: StanzaID
    /// The assigning entity; only trust an id whose `by` is the entity you expect (the room's bare JID).
    public var by: JID

    public init(id: StanzaID, by: JID) {
        self.id = id
        self.by = by
    }

    /// Reads the element; throws when it is not this one or lacks what the spec requires.
    public init(element: XElement) throws(StanzaParseError) {
        try element.expect("stanza-id", XMPPNamespace.stanzaID)
        let text = try element.required("id")
        guard let id = StanzaID(text) else { throw StanzaParseError(element: "stanza-id", .invalidValue(field: "id", value: text)) }
        guard let by = try element.jid("by") else { throw StanzaParseError(element: "stanza-id", .missingAttribute("by")) }
        self.id = id
        self.by = by
    }

    /// The element, ready to serialize.
    public var element: XElement {
        XElement("stanza-id", namespace: XMPPNamespace.stanzaID, ["id": id.rawValue, "by": by.description])
    }
}
