import IsthmusCommon
import XMLStream

/// An occupant's affiliation with a room (XEP-0045 §5.2).
public enum MUCAffiliation: String, Sendable, Hashable {
    case owner, admin, member, outcast, none
}

/// An occupant's role in a room (XEP-0045 §5.1).
public enum MUCRole: String, Sendable, Hashable {
    case moderator, participant, visitor, none
}

/// `<item affiliation role jid nick>` in a `muc#user` element: who an occupant is and may do.
public struct MUCItem: Sendable, Hashable {
    /// The long-lived relation to the room.
    public var affiliation: MUCAffiliation?
    /// The role for this visit.
    public var role: MUCRole?
    /// The occupant's real JID (shown in non-anonymous rooms and to moderators).
    public var jid: JID?
    /// The new nick, in a 303 nick-change presence.
    public var nick: String?
    /// The reason of a kick or ban.
    public var reason: String?
    /// The nick of the moderator who kicked or banned.
    public var actorNick: String?

    public init(
        affiliation: MUCAffiliation? = nil, role: MUCRole? = nil, jid: JID? = nil, nick: String? = nil,
        reason: String? = nil, actorNick: String? = nil
    ) {
        self.affiliation = affiliation
        self.role = role
        self.jid = jid
        self.nick = nick
        self.reason = reason
        self.actorNick = actorNick
    }

    /// Reads `<item>` in `namespace` (`muc#user` or `muc#admin`). Unknown affiliation or role values read as nil.
    public init(element: XElement) throws(StanzaParseError) {
        affiliation = element[attribute: "affiliation"].flatMap(MUCAffiliation.init(rawValue:))
        role = element[attribute: "role"].flatMap(MUCRole.init(rawValue:))
        jid = try element.jid("jid")
        nick = element[attribute: "nick"]
        reason = element.childText("reason", element.namespace)
        actorNick = element.child("actor", namespace: element.namespace)?[attribute: "nick"]
    }

    /// The `<item>` element in `namespace`.
    public func element(namespace: String = XMPPNamespace.mucUser) -> XElement {
        var item = XElement("item", namespace: namespace, [
            "affiliation": affiliation?.rawValue, "role": role?.rawValue, "jid": jid?.description, "nick": nick,
        ])
        if let actorNick { item.append(XElement("actor", namespace: namespace, ["nick": actorNick])) }
        if let reason { item.append(XElement("reason", namespace: namespace, children: [.text(reason)])) }
        return item
    }
}
