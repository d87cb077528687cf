@testable import Bridge
import FoundationEssentials
import IsthmusCommon
@testable import IsthmusStore
import Testing

/// Inbox rows back into events, for the portals and the DMs alike.
@Suite struct InboxDecodingTests {
    let room = RoomID("!dm:localhost")!

    func entry(_ seq: Int64, _ event: MatrixRoomEvent?) throws -> InboxEntry {
        let payload = try event.map { Array(try JSONEncoder().encode($0)) } ?? Array("not json".utf8)
        return InboxEntry(seq: seq, room: room, eventID: event?.eventID ?? EventID("$bad")!, payload: payload)
    }

    @Test func keepsTheOrderAndReportsTheRowsThatDoNotDecode() throws {
        let first = MatrixRoomEvent(eventID: EventID("$1")!, room: room, sender: UserID("@alice:localhost")!,
                                    content: .message(msgtype: .text, body: "one", details: nil))
        var second = first
        second.eventID = EventID("$2")!
        let bad = try entry(2, nil)
        let decoded = QueuedMatrixEvent.decoding([try entry(1, first), bad, try entry(3, second)])
        #expect(decoded.queued == [QueuedMatrixEvent(seq: 1, event: first), QueuedMatrixEvent(seq: 3, event: second)])
        #expect(decoded.undecodable == [UndecodableInboxRow(seq: 2, eventID: bad.eventID, room: room)])
    }

    @Test func theMachinesDropWhatDoesNotDecodeWithAnErrorLine() {
        let row = UndecodableInboxRow(seq: 7, eventID: EventID("$bad")!, room: room)
        #expect(row.dropped.level == .error && row.dropped.metadata["matrix.event.id"] == "$bad")
        var dm = DirectChatMachine(configuration: .init(naming: BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!,
                                                        mediaLinks: nil))
        #expect(dm.receive(.undecodable(row), now: .now) == [.log(row.dropped), .drop(seq: 7)])
        var f = MachineFixture()
        f.activate()
        #expect(f.act(.checkTimeline) == [.catchUp(.readTimeline)])
        #expect(f.machine.receive(.catchUp(.inboxRead([], undecodable: [row])), now: f.t0) == [.log(row.dropped), .dequeue(seq: 7)])
    }
}
