import IsthmusCommon
import XMLStream

/// A `<message>` stanza (RFC 6121 §5) with the extensions the bridge reads: delay (XEP-0203), stanza-id and origin-id
/// (XEP-0359), occupant-id (XEP-0421), MUC user data (XEP-0045). Everything else stays in ``extensions`` as elements,
/// so nothing is lost when a message is read and written again.
///
/// Live messages and archived ones (XEP-0313, see ``ArchivedMessage``) use this same type.
public struct Message: Sendable, Hashable {
    /// RFC 6121 §5.2.2; an unknown type reads as `.normal`.
    public enum MessageType: String, Sendable, Hashable {
        case chat, error, groupchat, headline, normal
    }

    /// `type`; absent means `.normal`.
    public var type: MessageType
    /// The sender (for room messages: `room@service/nick`).
    public var from: JID?
    /// The recipient.
    public var to: JID?
    /// The sender's `id` attribute (rooms reflect it unchanged).
    public var id: StanzaAttributeID?
    /// The first `<body>` (exactly as sent; `""` for an empty body).
    public var body: String?
    /// `<subject>`: a room's topic (`""` clears it).
    public var subject: String?
    /// XEP-0203 delayed-delivery stamp (history, archives).
    public var delay: Delay?
    /// Every valid `<stanza-id>`; trust only the one whose `by` you expect (see ``stanzaID(by:)``).
    public var stanzaIDs: [AssignedStanzaID]
    /// XEP-0359 `<origin-id>`, chosen by the sender.
    public var originID: OriginID?
    /// XEP-0421 `<occupant-id>`, added by the room.
    public var occupantID: OccupantID?
    /// XEP-0045 `muc#user` data (invites, status codes).
    public var mucUser: MUCUser?
    /// The error of a `type='error'` message.
    public var error: StanzaError?
    /// Children not read into the fields above, in order.
    public var extensions: [XElement]

    public init(
        type: MessageType = .normal, from: JID? = nil, to: JID? = nil, id: StanzaAttributeID? = nil,
        body: String? = nil, subject: String? = nil, delay: Delay? = nil, stanzaIDs: [AssignedStanzaID] = [],
        originID: OriginID? = nil, occupantID: OccupantID? = nil, mucUser: MUCUser? = nil,
        error: StanzaError? = nil, extensions: [XElement] = []
    ) {
        self.type = type
        self.from = from
        self.to = to
        self.id = id
        self.body = body
        self.subject = subject
        self.delay = delay
        self.stanzaIDs = stanzaIDs
        self.originID = originID
        self.occupantID = occupantID
        self.mucUser = mucUser
        self.error = error
        self.extensions = extensions
    }

    /// The stanza id assigned by `entity` (e.g. the room's bare JID), if the message carries one.
    public func stanzaID(by entity: JID) -> StanzaID? {
        stanzaIDs.first { $0.by == entity }?.id
    }

    /// The first extension called `name` in `namespace`.
    public func extensionElement(_ name: String, namespace: String) -> XElement? {
        extensions.first { $0.name == name && $0.namespace == namespace }
    }

    /// Reads a `<message>` in any stanza namespace. Malformed known extensions are kept as ``extensions``; only bad
    /// addresses fail the whole stanza.
    public init(element: XElement) throws(StanzaParseError) {
        guard element.name == "message", XMPPNamespace.stanzaNamespaces.contains(element.namespace) else {
            throw StanzaParseError(element: "message", .unexpectedElement(name: element.name, namespace: element.namespace))
        }
        self.init(
            type: element[attribute: "type"].flatMap(MessageType.init(rawValue:)) ?? .normal,
            from: try element.jid("from"), to: try element.jid("to"),
            id: element[attribute: "id"].flatMap(StanzaAttributeID.init))
        let stanzaNamespace = element.namespace
        for child in element.elements {
            switch (child.name, child.namespace) {
            case ("body", stanzaNamespace) where body == nil: body = child.text
            case ("subject", stanzaNamespace) where subject == nil: subject = child.text
            case ("error", stanzaNamespace) where error == nil:
                if let parsed = try? StanzaError(element: child) { error = parsed } else { extensions.append(child) }
            case ("delay", XMPPNamespace.delay) where delay == nil:
                if let parsed = try? Delay(element: child) { delay = parsed } else { extensions.append(child) }
            case ("stanza-id", XMPPNamespace.stanzaID):
                if let parsed = try? AssignedStanzaID(element: child) { stanzaIDs.append(parsed) } else { extensions.append(child) }
            case ("origin-id", XMPPNamespace.stanzaID) where originID == nil:
                if let id = child[attribute: "id"].flatMap(OriginID.init) { originID = id } else { extensions.append(child) }
            case ("occupant-id", XMPPNamespace.occupantID) where occupantID == nil:
                if let id = child[attribute: "id"].flatMap(OccupantID.init) { occupantID = id } else { extensions.append(child) }
            case ("x", XMPPNamespace.mucUser) where mucUser == nil:
                if let parsed = try? MUCUser(element: child) { mucUser = parsed } else { extensions.append(child) }
            default:
                extensions.append(child)
            }
        }
    }

    /// The `<message>` element (in the component namespace; the serializer leaves the stanza namespace implicit).
    public var element: XElement {
        let ns = XMPPNamespace.component
        var message = XElement("message", namespace: ns, [
            "type": type == .normal ? nil : type.rawValue, "from": from?.description, "to": to?.description, "id": id?.rawValue,
        ])
        if let subject { message.append(XElement("subject", namespace: ns, children: subject.isEmpty ? [] : [.text(subject)])) }
        if let body { message.append(XElement("body", namespace: ns, children: body.isEmpty ? [] : [.text(body)])) }
        if let mucUser { message.append(mucUser.element) }
        if let delay { message.append(delay.element) }
        for stanzaID in stanzaIDs { message.append(stanzaID.element) }
        if let originID { message.append(XElement("origin-id", namespace: XMPPNamespace.stanzaID, ["id": originID.rawValue])) }
        if let occupantID { message.append(XElement("occupant-id", namespace: XMPPNamespace.occupantID, ["id": occupantID.rawValue])) }
        if let error { message.append(error.element(namespace: ns)) }
        for extra in extensions { message.append(extra) }
        return message
    }
}
