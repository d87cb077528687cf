@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import XMPP

/// The MUC's avatar → the Matrix room's avatar (XEP-0486) through the portal machine.
@Suite struct PortalRoomAvatarMachineTests {
    typealias Change = RoomStateMachine.RoomAvatarChange
    let a = String(repeating: "a1", count: 20)
    let b = String(repeating: "b2", count: 20)

    func features(_ avatar: AvatarUpdate?) -> RoomFeatures { RoomFeatures(stanzaIDs: true, archive: true, avatar: avatar) }

    /// A machine joined to the MUC whose room state is not loaded yet.
    func joined(avatars: Bool = true) -> MachineFixture {
        var f = MachineFixture(avatars: avatars)
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        _ = f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: false)))
        return f
    }

    /// An active machine that set `applied` before (nil: none of its own).
    func active(applied: RoomAvatarRecord? = nil, features: RoomFeatures? = nil) -> MachineFixture {
        var f = MachineFixture(avatars: true)
        var snapshot = f.snapshot(first: true)
        snapshot.avatar = applied
        f.activate(snapshot: snapshot, features: features ?? self.features(applied.map { .photo($0.sha1) }))
        #expect(f.machine.roomState.avatar.pending == nil)
        return f
    }

    /// A presence from the room's bare JID with its avatar hash.
    func roomPresence(_ f: MachineFixture, _ avatar: AvatarUpdate) -> PortalEvent {
        var presence = RoomPresence(room: f.muc, nick: "", to: f.naming.botOccupant, available: true)
        presence.avatar = avatar
        return .xmppPresence(presence)
    }

    var configurationChange: PortalEvent {
        var notice = MachineFixture().groupchat("", "", stanzaID: nil)
        notice.body = nil
        notice.statusCodes = [.configurationChanged]
        return .xmppMessage(notice)
    }

    @Test func theHashInDiscoInfoIsAppliedOnceTheRoomsStateIsLoadedThenOnlyWhenItChanges() {
        var f = joined()
        // Before the room's state is loaded, what the bridge set before is not known: nothing yet.
        #expect(f.act(.catchUp(.featuresRead(features(.photo(a))))) == [.catchUp(.recordRoomFeatures(features(.photo(a)))), .loadRoom])
        #expect(f.act(.roomLoaded(f.snapshot(first: true))).first == .roomState(.setMatrixRoomAvatar(Change(sha1: a, ours: nil))))
        // The activation goes on (the change's end is queued as an event, after it).
        var next = f.act(.puppets(.membersFetched([:])))
        if case .loadUndelivered? = next.last { next = f.act(.undeliveredLoaded([])) }
        #expect(next.last == .catchUp(.readTimeline))
        _ = f.act(.catchUp(.inboxRead([])))
        #expect(f.act(PortalEvent.roomAvatarSet(Change(sha1: a, ours: nil), .applied(RoomAvatarRecord(sha1: a, mxc: "mxc://hs/a")))) == [])
        // Status 104: disco#info again; the same hash is not set again, a new one is (replacing the bridge's own).
        #expect(f.act(configurationChange) == [.catchUp(.readRoomFeatures)])
        #expect(f.act(.catchUp(.featuresRead(features(.photo(a))))) == [.catchUp(.recordRoomFeatures(features(.photo(a))))])
        #expect(f.act(configurationChange) == [.catchUp(.readRoomFeatures)])
        #expect(f.act(.catchUp(.featuresRead(features(.photo(b)))))
                == [.catchUp(.recordRoomFeatures(features(.photo(b)))), .roomState(.setMatrixRoomAvatar(Change(sha1: b, ours: "mxc://hs/a")))])
    }

    @Test func aHashAppliedBeforeARestartIsNotAppliedAgain() {
        let f = active(applied: RoomAvatarRecord(sha1: a, mxc: "mxc://hs/a"))
        #expect(f.machine.roomState.avatar.applied == RoomAvatarRecord(sha1: a, mxc: "mxc://hs/a"))
    }

    @Test func theRoomsPresenceAnnouncesItsAvatarAndOneChangeIsInFlightAtATime() {
        // ejabberd 23.01 publishes no disco#info field: the room's presence says it.
        var f = active(features: features(nil))
        #expect(f.act(roomPresence(f, .photo(a))) == [.roomState(.setMatrixRoomAvatar(Change(sha1: a, ours: nil)))])
        #expect(f.act(roomPresence(f, .photo(a))) == [])
        #expect(f.act(roomPresence(f, .photo(b))) == [])
        // The first ends; the newer hash goes next.
        #expect(f.act(PortalEvent.roomAvatarSet(Change(sha1: a, ours: nil), .applied(RoomAvatarRecord(sha1: a, mxc: "mxc://hs/a"))))
                == [.roomState(.setMatrixRoomAvatar(Change(sha1: b, ours: "mxc://hs/a")))])
        // An empty <x/> (not ready) and a disco#info without the field change nothing.
        #expect(f.act(roomPresence(f, .notReady)) == [])
        #expect(f.act(.catchUp(.featuresRead(features(nil)))) == [.catchUp(.recordRoomFeatures(features(nil)))])
    }

    @Test func aRemovedAvatarClearsTheMatrixRoomsOnlyWhenTheBridgeSetIt() {
        var f = active(features: features(nil))
        #expect(f.machine.roomState.avatar.pending == nil, "no avatar of ours: nothing to clear")
        #expect(f.act(roomPresence(f, .none)) == [])
        var g = active(applied: RoomAvatarRecord(sha1: a, mxc: "mxc://hs/a"))
        let clear = Change(sha1: nil, ours: "mxc://hs/a")
        #expect(g.act(roomPresence(g, .none)) == [.roomState(.setMatrixRoomAvatar(clear))])
        #expect(g.act(PortalEvent.roomAvatarSet(clear, .applied(nil))) == [])
        #expect(g.machine.roomState.avatar.applied == nil)
        #expect(g.act(roomPresence(g, .none)) == [])
    }

    @Test func aRefusalIsLoggedOnceAndAFailedFetchIsRetriedAtTheNextAnnouncement() {
        var f = active(features: features(nil))
        let change = Change(sha1: a, ours: nil)
        #expect(f.act(roomPresence(f, .photo(a))) == [.roomState(.setMatrixRoomAvatar(change))])
        let refused = f.machine.receive(.event(.roomAvatarSet(change, .failed(.refused("M_FORBIDDEN")))), now: f.t0)
        #expect(refused.count == 1)
        guard case .roomState(.log(let entry))? = refused.first else { Issue.record("no log line: \(refused)"); return }
        #expect(entry.level == .warning)
        #expect(f.act(roomPresence(f, .photo(a))) == [.roomState(.setMatrixRoomAvatar(change))])
        #expect(f.machine.receive(.event(.roomAvatarSet(change, .failed(.refused("M_FORBIDDEN")))), now: f.t0) == [], "said once")
        #expect(f.act(roomPresence(f, .photo(a))) == [.roomState(.setMatrixRoomAvatar(change))])
        #expect(f.act(PortalEvent.roomAvatarSet(change, .notFetched)) == [], "no retry until the room announces it again")
        #expect(f.act(roomPresence(f, .photo(a))) == [.roomState(.setMatrixRoomAvatar(change))])
    }

    @Test func withoutAvatarsNothingIsSet() {
        var f = MachineFixture(avatars: false)
        f.activate(features: features(.photo(a)))
        #expect(f.machine.roomState.avatar.pending == nil)
        #expect(f.act(roomPresence(f, .photo(a))) == [])
    }
}
