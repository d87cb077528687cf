import IsthmusCommon
import XMLStream

/// `<destroy jid='…'><reason>…</reason></destroy>` in the `muc#user` element of the unavailable presences a room
/// sends as it is destroyed (XEP-0045 §10.9): why, and the alternate venue, both optional. Pure value.
public struct MUCDestroy: Sendable, Hashable {
    /// Where the room's people should go instead, when the owner named a room.
    public var alternateVenue: JID?
    /// The owner's reason, when given.
    public var reason: String?

    public init(alternateVenue: JID? = nil, reason: String? = nil) {
        self.alternateVenue = alternateVenue
        self.reason = reason
    }

    /// Reads `<destroy>` in `muc#user`; an unparsable `jid` reads as no alternate venue (the destruction still counts).
    public init(element: XElement) throws(StanzaParseError) {
        try element.expect("destroy", XMPPNamespace.mucUser)
        alternateVenue = (try? element.jid("jid")) ?? nil
        reason = element.childText("reason", XMPPNamespace.mucUser).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The element, ready to serialize.
    public var element: XElement {
        var destroy = XElement("destroy", namespace: XMPPNamespace.mucUser, ["jid": alternateVenue?.description])
        if let reason { destroy.append(XElement("reason", namespace: XMPPNamespace.mucUser, children: [.text(reason)])) }
        return destroy
    }
}

extension MUCUser {
    /// The room's `<destroy/>` (XEP-0045 §10.9), when this presence announces that the room was destroyed.
    public var destroy: MUCDestroy? {
        extensions.first { $0.name == "destroy" && $0.namespace == XMPPNamespace.mucUser }.flatMap { try? MUCDestroy(element: $0) }
    }
}
