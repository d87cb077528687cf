import IsthmusCommon
import XMLStream

/// A XEP-0045 §7.8.2 mediated invitation, inside `<x xmlns='http://jabber.org/protocol/muc#user'>`.
///
/// Sent by an occupant to the room with `to` (the invitee's JID); the room forwards it to the invitee with `from`
/// (the inviter's JID) instead. Pure value.
public struct MUCInvite: Sendable, Hashable {
    /// The invitee, on an invitation sent to the room.
    public var to: JID?
    /// The inviter, on an invitation the room forwards.
    public var from: JID?
    /// The inviter's `<reason>`, if any.
    public var reason: String?

    public init(to: JID? = nil, from: JID? = nil, reason: String? = nil) {
        self.to = to
        self.from = from
        self.reason = reason
    }

    /// The first `<invite>` among a `muc#user` element's children; nil when there is none. An invalid `to` or
    /// `from` reads as absent (the room validates what it forwards).
    public init?(_ mucUser: MUCUser) {
        guard let element = mucUser.extensions.first(where: { $0.name == "invite" && $0.namespace == XMPPNamespace.mucUser }) else {
            return nil
        }
        to = element[attribute: "to"].flatMap(JID.init)
        from = element[attribute: "from"].flatMap(JID.init)
        reason = element.childText("reason", XMPPNamespace.mucUser).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The `<invite>` element.
    public var element: XElement {
        var invite = XElement("invite", namespace: XMPPNamespace.mucUser, ["to": to?.description, "from": from?.description])
        if let reason { invite.append(XElement("reason", namespace: XMPPNamespace.mucUser, children: [.text(reason)])) }
        return invite
    }

    /// The `<x xmlns='muc#user'>` carrying only this invitation.
    public var mucUser: MUCUser { MUCUser(extensions: [element]) }
}
