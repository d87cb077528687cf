import IsthmusCommon
import IsthmusStore
import Synchronization
import XMPP
import XMPPComponent

/// The avatars of the Matrix users' puppets as XMPP sees them (XEP-0153): per puppet (bare JID) and room, the image
/// its vCard answers with and whose hash its presences in that room carry. In memory (portals set it again after a
/// restart, from the members' events). Thread-safe; no I/O.
final class PuppetAvatars: Sendable {
    private struct State {
        var avatars: [JID: [JID: StoredAvatar]] = [:]
    }
    private let state = Mutex(State())

    init() {}

    /// Sets (or with nil, clears) `puppet`'s avatar in `room`.
    func set(_ avatar: StoredAvatar?, puppet: JID, room: JID) {
        state.withLock { state in
            state.avatars[puppet.bare, default: [:]][room.bare] = avatar
            if state.avatars[puppet.bare]?.isEmpty == true { state.avatars[puppet.bare] = nil }
        }
    }

    /// `puppet`'s avatar in `room`; nil when it has none there.
    func avatar(puppet: JID, room: JID) -> StoredAvatar? {
        state.withLock { $0.avatars[puppet.bare]?[room.bare] }
    }

    /// The avatar `puppet`'s vCard shows to `asker`: the one in the asker's room when the asker is an occupant JID
    /// (a vCard request routed through the MUC), else the one in any room (the first by room JID). nil: none.
    func vCardAvatar(puppet: JID, asker: JID?) -> StoredAvatar? {
        state.withLock { state in
            guard let rooms = state.avatars[puppet.bare] else { return nil }
            if let asker, let inRoom = rooms[asker.bare] { return inRoom }
            return rooms.sorted { $0.key.description < $1.key.description }.first?.value
        }
    }

    /// The XEP-0153 `<x xmlns='vcard-temp:x:update'>` for `puppet`'s presences in `room` (an empty `<photo/>`: none).
    func presenceUpdate(puppet: JID, room: JID) -> XElement {
        (avatar(puppet: puppet, room: room).map { AvatarUpdate.photo($0.sha1) } ?? AvatarUpdate.none).element
    }
}

/// Answers the IQ requests the XMPP server routes to the component's JIDs (RFC 6120 §8.2.3: every get or set gets
/// a result or an error): `vcard-temp` gets (XEP-0054) with the puppet's avatar, XEP-0199 pings, the account's roster
/// pushes (client mode), and
/// `service-unavailable` for anything else (RFC 6120 §8.4). Decisions are pure (``response(to:)``); ``answer(_:)`` sends.
struct ComponentIQResponder: Sendable {
    let connection: any StanzaSession
    let avatars: PuppetAvatars

    /// The response to the request `iq`; nil for what is not a request (results and errors are not answered).
    func response(to iq: IQ) -> IQ? {
        guard iq.isRequest else { return nil }
        switch (iq.type, iq.payload) {
        case (.get, .ping?):
            return iq.result()
        case (.set, .other(let element)?) where element.name == "query" && element.namespace == XMPPNamespace.roster
                && (iq.from == nil || iq.from == iq.to?.bare):
            // RFC 6121 §2.1.6: a roster push (client mode's account, after a subscription changed) is acknowledged;
            // one from anyone but the account itself is not a push.
            return iq.result()
        case (.get, .other(let element)?) where element.name == "vCard" && element.namespace == XMPPNamespace.vcard:
            let photo = iq.to.flatMap { avatars.vCardAvatar(puppet: $0, asker: iq.from) }
                .map { VCardPhoto(mediaType: $0.mediaType, data: $0.data) }
            return iq.result(payload: .other(VCardPhoto.vCard(photo)))
        default:
            return iq.errorResponse(StanzaError(type: .cancel, condition: .serviceUnavailable))
        }
    }

    /// Sends the response to `iq`, if it calls for one. A link that is down drops it (the asker times out).
    func answer(_ iq: IQ) async {
        guard let response = response(to: iq) else { return }
        try? await connection.send(.iq(response))
    }
}
