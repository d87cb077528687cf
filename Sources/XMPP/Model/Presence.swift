import IsthmusCommon
import XMLStream

/// A `<presence>` stanza (RFC 6121 §4) with MUC data (XEP-0045 user items and status codes, join requests) and
/// occupant-id (XEP-0421). Other children stay in ``extensions``.
public struct Presence: Sendable, Hashable {
    /// RFC 6121 §4.7.1; no `type` attribute means available.
    public enum PresenceType: String, Sendable, Hashable {
        case available, unavailable, error, subscribe, subscribed, unsubscribe, unsubscribed, probe
    }

    /// RFC 6121 §4.7.2.1.
    public enum Show: String, Sendable, Hashable {
        case away, chat, dnd, xa
    }

    /// `type`; absent means `.available`.
    public var type: PresenceType
    /// The sender (for room presences: `room@service/nick`).
    public var from: JID?
    /// The recipient.
    public var to: JID?
    /// The sender's `id` attribute.
    public var id: StanzaAttributeID?
    /// Availability sub-state (`<show>`).
    public var show: Show?
    /// Free-text status (`<status>`).
    public var status: String?
    /// Resource priority (`<priority>`).
    public var priority: Int?
    /// `muc#user` data on presences from a room.
    public var mucUser: MUCUser?
    /// `muc` join request on presences to a room.
    public var mucJoin: MUCJoinRequest?
    /// XEP-0421 `<occupant-id>`, added by the room.
    public var occupantID: OccupantID?
    /// The error of a `type='error'` presence (e.g. a refused join).
    public var error: StanzaError?
    /// Children not read into the fields above, in order.
    public var extensions: [XElement]

    public init(
        type: PresenceType = .available, from: JID? = nil, to: JID? = nil, id: StanzaAttributeID? = nil,
        show: Show? = nil, status: String? = nil, priority: Int? = nil, mucUser: MUCUser? = nil,
        mucJoin: MUCJoinRequest? = nil, occupantID: OccupantID? = nil, error: StanzaError? = nil,
        extensions: [XElement] = []
    ) {
        self.type = type
        self.from = from
        self.to = to
        self.id = id
        self.show = show
        self.status = status
        self.priority = priority
        self.mucUser = mucUser
        self.mucJoin = mucJoin
        self.occupantID = occupantID
        self.error = error
        self.extensions = extensions
    }

    /// MUC status codes carried by this presence (empty when none).
    public var statusCodes: [MUCStatusCode] { mucUser?.statusCodes ?? [] }

    /// Reads a `<presence>` in any stanza namespace. An unknown type fails the stanza (RFC 6121 §4.7.1).
    public init(element: XElement) throws(StanzaParseError) {
        guard element.name == "presence", XMPPNamespace.stanzaNamespaces.contains(element.namespace) else {
            throw StanzaParseError(element: "presence", .unexpectedElement(name: element.name, namespace: element.namespace))
        }
        var type = PresenceType.available
        if let text = element[attribute: "type"] {
            guard let known = PresenceType(rawValue: text), known != .available else {
                throw StanzaParseError(element: "presence", .invalidValue(field: "type", value: text))
            }
            type = known
        }
        self.init(type: type, from: try element.jid("from"), to: try element.jid("to"),
                  id: element[attribute: "id"].flatMap(StanzaAttributeID.init))
        let ns = element.namespace
        for child in element.elements {
            switch (child.name, child.namespace) {
            case ("show", ns) where show == nil: show = Show(rawValue: child.text)
            case ("status", ns) where status == nil: status = child.text
            case ("priority", ns) where priority == nil: priority = Int(child.text)
            case ("error", ns) where error == nil:
                if let parsed = try? StanzaError(element: child) { error = parsed } else { extensions.append(child) }
            case ("x", XMPPNamespace.mucUser) where mucUser == nil:
                if let parsed = try? MUCUser(element: child) { mucUser = parsed } else { extensions.append(child) }
            case ("x", XMPPNamespace.muc) where mucJoin == nil:
                if let parsed = try? MUCJoinRequest(element: child) { mucJoin = parsed } else { extensions.append(child) }
            case ("occupant-id", XMPPNamespace.occupantID) where occupantID == nil:
                if let id = child[attribute: "id"].flatMap(OccupantID.init) { occupantID = id } else { extensions.append(child) }
            default:
                extensions.append(child)
            }
        }
    }

    /// The `<presence>` element (component namespace, left implicit by the serializer).
    public var element: XElement {
        let ns = XMPPNamespace.component
        var presence = XElement("presence", namespace: ns, [
            "type": type == .available ? nil : type.rawValue, "from": from?.description, "to": to?.description,
            "id": id?.rawValue,
        ])
        if let show { presence.append(XElement("show", namespace: ns, children: [.text(show.rawValue)])) }
        if let status { presence.append(XElement("status", namespace: ns, children: status.isEmpty ? [] : [.text(status)])) }
        if let priority { presence.append(XElement("priority", namespace: ns, children: [.text(String(priority))])) }
        if let mucJoin { presence.append(mucJoin.element) }
        if let mucUser { presence.append(mucUser.element) }
        if let occupantID { presence.append(XElement("occupant-id", namespace: XMPPNamespace.occupantID, ["id": occupantID.rawValue])) }
        if let error { presence.append(error.element(namespace: ns)) }
        for extra in extensions { presence.append(extra) }
        return presence
    }
}
