import Foundation
import IsthmusCommon
import XMLStream
import XMPP

/// Room administration as an XMPP user (XEP-0045 §9–10): configuring a new room, changing roles and affiliations,
/// reading the affiliation and role lists.
extension XMPPTestClient {
    /// Joins `room` as `nick`, creating it, and submits the owner's configuration form with `fields`
    /// (`muc#roomconfig_…` → values); the room must not exist yet.
    public func createRoom(_ room: JID, nick: String, fields: [String: [String]], within seconds: Double = 10) async throws {
        let occupant = room.bare.with(resource: nick)!
        try send(.presence(Presence(to: occupant, mucJoin: MUCJoinRequest(history: MUCHistoryRequest.none))))
        let answer = try await nextPresence(within: seconds, "self-presence in \(room)") { presence in
            presence.from == occupant && (presence.type == .error || presence.statusCodes.contains(.selfPresence))
        }
        if let error = answer.error { throw error }
        guard answer.statusCodes.contains(.roomCreated) else { throw UnexpectedAnswer(request: "creating \(room)", element: answer.element) }
        let form = DataForm(type: "submit", fields: [DataForm.Field("FORM_TYPE", type: "hidden", values: [XMPPNamespace.mucRoomConfig])]
                            + fields.sorted { $0.key < $1.key }.map { DataForm.Field($0.key, values: $0.value) })
        let result = try await request(IQ(type: .set, to: room.bare, payload: .mucOwner(form)), within: seconds)
        if let error = result.error { throw error }
    }

    /// Sets `nick`'s role in `room` (XEP-0045 §8.4/§9.6 and §10.4: moderator, participant, visitor).
    public func setRole(_ role: String, of nick: String, in room: JID, within seconds: Double = 10) async throws {
        let query = XElement("query", namespace: XMPPNamespace.mucAdmin, children: [
            .element(XElement("item", namespace: XMPPNamespace.mucAdmin, ["nick": nick, "role": role])),
        ])
        let result = try await request(IQ(type: .set, to: room.bare, payload: .other(query)), within: seconds)
        if let error = result.error { throw error }
    }

    /// Sets `jid`'s affiliation with `room` (XEP-0045 §9.3–9.8, §10.3–10.7: owner, admin, member, outcast, none).
    public func setAffiliation(_ affiliation: String, of jid: JID, in room: JID, within seconds: Double = 10) async throws {
        let query = XElement("query", namespace: XMPPNamespace.mucAdmin, children: [
            .element(XElement("item", namespace: XMPPNamespace.mucAdmin, ["jid": jid.description, "affiliation": affiliation])),
        ])
        let result = try await request(IQ(type: .set, to: room.bare, payload: .other(query)), within: seconds)
        if let error = result.error { throw error }
    }

    /// The `<item>`s of `room`'s list for `attribute`='`value`' (e.g. affiliation owner, role moderator), as the
    /// room's owner or admin asks (XEP-0045 §9.5, §10.5).
    public func mucAdminList(_ attribute: String, _ value: String, in room: JID, within seconds: Double = 10) async throws -> [MUCItem] {
        let query = XElement("query", namespace: XMPPNamespace.mucAdmin, children: [
            .element(XElement("item", namespace: XMPPNamespace.mucAdmin, [attribute: value])),
        ])
        let result = try await request(IQ(type: .get, to: room.bare, payload: .other(query)), within: seconds)
        if let error = result.error { throw error }
        guard case .other(let answer)? = result.payload else { return [] }
        return try answer.children("item", namespace: XMPPNamespace.mucAdmin).map { try MUCItem(element: $0) }
    }
}
