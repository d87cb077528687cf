@testable import Bridge
import Foundation
import IsthmusCommon
@testable import IsthmusStore
import Testing

/// What a homeserver transaction becomes before and after its commit: rows kept, hand-offs, the gap's action.
@Suite struct MatrixIntakeTests {
    let linked = RoomID("!linked:localhost")!
    let dm = RoomID("!dm:localhost")!
    let other = RoomID("!other:localhost")!
    let alice = UserID("@alice:localhost")!

    func event(_ id: String, in room: RoomID) -> MatrixRoomEvent {
        MatrixRoomEvent(eventID: EventID(id)!, room: room, sender: alice, content: .message(msgtype: .text, body: id))
    }

    @Test func onlyLinkedAndDMRoomsEventsAreKeptInOrder() throws {
        let events = [event("$1", in: linked), event("$2", in: other), event("$3", in: dm), event("$4", in: linked)]
        let rows = try MatrixIntake.rows(events, linked: [linked], direct: [dm])
        #expect(rows.map(\.eventID.rawValue) == ["$1", "$3", "$4"])
        #expect(rows.map(\.room) == [linked, dm, linked])
        #expect(try rows.first.map { try JSONDecoder().decode(MatrixRoomEvent.self, from: Data($0.payload)) } == events[0])
        #expect(try MatrixIntake.rows(events, linked: [], direct: []).isEmpty)
    }

    @Test func whatTheStoreAddedIsHandedOffPerRoomAndAReplayedEventIsNot() {
        let events = [event("$1", in: linked), event("$2", in: dm), event("$3", in: linked), event("$4", in: linked)]
        // $3 was queued before (a replay): the store did not add it again.
        let added = [InboxEntry(seq: 7, room: linked, eventID: EventID("$1")!, payload: []),
                     InboxEntry(seq: 8, room: dm, eventID: EventID("$2")!, payload: []),
                     InboxEntry(seq: 9, room: linked, eventID: EventID("$4")!, payload: [])]
        let handOffs = MatrixIntake.handOffs(added, events: events, direct: [dm])
        #expect(handOffs == [
            .init(room: linked, direct: false, queued: [QueuedMatrixEvent(seq: 7, event: events[0]), QueuedMatrixEvent(seq: 9, event: events[3])]),
            .init(room: dm, direct: true, queued: [QueuedMatrixEvent(seq: 8, event: events[1])]),
        ])
    }

    @Test func aNewHoleChecksEveryRoomAnOpenOneTheLinkedRoomsThatGotEvents() {
        let toPortal = MatrixIntake.HandOff(room: linked, direct: false, queued: [])
        let toDMs = MatrixIntake.HandOff(room: dm, direct: true, queued: [])
        #expect(MatrixIntake.gapAction(.new, handOffs: []) == .checkEveryRoom)
        #expect(MatrixIntake.gapAction(.new, handOffs: [toPortal]) == .checkEveryRoom)
        #expect(MatrixIntake.gapAction(.open, handOffs: [toPortal, toDMs]) == .checkRooms([linked]))
        #expect(MatrixIntake.gapAction(.open, handOffs: [toDMs]) == .none)
        #expect(MatrixIntake.gapAction(.none, handOffs: [toPortal]) == .none)
    }

    @Test func aHostedRoomsEventsAreKeptAndGoToTheGatewayNotToAPortal() throws {
        let hosted = RoomID("!hosted:localhost")!
        let events = [event("$1", in: hosted), event("$2", in: other), event("$3", in: linked)]
        let rows = try MatrixIntake.rows(events, linked: [linked], direct: [], hosted: [hosted])
        #expect(rows.map(\.eventID.rawValue) == ["$1", "$3"])
        let added = [InboxEntry(seq: 1, room: hosted, eventID: EventID("$1")!, payload: []),
                     InboxEntry(seq: 2, room: linked, eventID: EventID("$3")!, payload: [])]
        let handOffs = MatrixIntake.handOffs(added, events: events, direct: [], hosted: [hosted])
        #expect(handOffs.map(\.hosted) == [true, false])
        #expect(handOffs.map(\.toPortal) == [false, true])
        #expect(MatrixIntake.gapAction(.open, handOffs: handOffs) == .checkRooms([linked]), "a hosted room has no timeline check")
    }
}
