import IsthmusCommon
import XMLStream

/// A XEP-0249 direct MUC invitation (v1.2): `<x xmlns='jabber:x:conference' jid='room@service' reason='…'/>` in a
/// message sent straight to the invitee, not through the room. Pure value. Anyone can send one naming any room: it
/// says where to go, never that the room let the invitee in.
public struct DirectInvite: Sendable, Hashable {
    /// The room's bare JID (the `jid` attribute, required).
    public var room: JID
    /// The inviter's `reason` attribute, if any.
    public var reason: String?
    /// The room's password (the `password` attribute), if the inviter gave one.
    public var password: String?

    public init(room: JID, reason: String? = nil, password: String? = nil) {
        self.room = room
        self.reason = reason
        self.password = password
    }

    /// The invitation `message` carries; nil without one or when its `jid` is not a room's bare JID.
    public init?(_ message: Message) {
        guard let element = message.extensionElement("x", namespace: XMPPNamespace.directInvite),
              let room = element[attribute: "jid"].flatMap(JID.init), room.localpart != nil, room.resource == nil else { return nil }
        self.room = room
        reason = element[attribute: "reason"].flatMap { $0.isEmpty ? nil : $0 }
        password = element[attribute: "password"]
    }

    /// The `<x xmlns='jabber:x:conference'>` element.
    public var element: XElement {
        XElement("x", namespace: XMPPNamespace.directInvite, ["jid": room.description, "reason": reason, "password": password])
    }
}
