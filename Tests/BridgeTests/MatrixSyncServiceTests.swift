@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import Synchronization
import Testing
import TestSupport

/// Matrix client mode's intake: the account's `/sync` batches go into the bridge as an application service's
/// transactions do — each batch's events queued in the commit that moves the stored position past it; the first sync
/// starts from now; the account's own events are echoes; a `limited` timeline makes the room check its timeline; an
/// invitation into a linked room is accepted.
@Suite struct MatrixSyncServiceTests {
    let room = RoomID("!room:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let alice = UserID("@alice:localhost")!

    /// Batches handed out in order; once they are used up a sync waits (as a long poll with nothing new would).
    final class ScriptedSync: MatrixSyncSource, Sendable {
        let batches = Mutex<[SyncResponse]>([])
        let asked = Mutex<[String?]>([])

        func add(_ response: SyncResponse) { batches.withLock { $0.append(response) } }

        func sync(since: String?, wait: Duration) async throws -> SyncResponse {
            asked.withLock { $0.append(since) }
            while true {
                if let next = batches.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return next }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    func message(_ id: String, _ body: String, from sender: UserID) -> ClientEvent {
        ClientEvent(type: "m.room.message", eventID: EventID(id)!, roomID: room, sender: sender, originServerTS: 0,
                    content: .message(.text(body)))
    }

    @Test func batchesAreQueuedWithTheirPositionAndTheFirstStartsFromNow() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        try await store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc))
        let xmpp = FakeXMPPLink(), matrix = FakeMatrixLink(), sync = ScriptedSync()
        matrix.state.withLock { $0.members = [room: [alice: "Alice"]] }
        let account = matrix.botUserID
        // The first batch is the rooms' past: not bridged.
        sync.add(SyncResponse(nextBatch: "s1", joined: [.init(room: room, events: [message("$old", "before the bridge", from: alice)])]))
        let bridge = Bridge(store: store, xmpp: xmpp, matrix: matrix, naming: BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!,
                            logger: .disabled, linkPollInterval: .milliseconds(20), matrixSync: sync)
        let events = xmpp.events
        let task = Task { await bridge.run(xmppEvents: events) }
        xmpp.feed.yield(.connected(reconnected: false))
        try await eventually("link active") { try await store.roomLinks().first?.status == .active }
        try await eventually("the first position kept") { try await store.syncPosition(account: account) == "s1" }

        // Then: alice's message crosses; the account's own (an echo) does not; the same batch again adds nothing.
        let batch = SyncResponse(nextBatch: "s2", joined: [.init(room: room, events: [
            message("$echo", "Romeo: from xmpp", from: account), message("$new", "hello", from: alice)])])
        sync.add(batch)
        sync.add(batch)
        sync.add(SyncResponse(nextBatch: "s3", joined: [.init(room: room, events: [message("$end", "sentinel", from: alice)])]))
        try await eventually("the sentinel crossed") { xmpp.state.withLock { $0.sent.contains { $0.body == "sentinel" } } }
        #expect(xmpp.state.withLock { $0.sent.map(\.body) }.filter { $0 != "" } == ["hello", "sentinel"])
        try await eventually("the position follows") { try await store.syncPosition(account: account) == "s3" }
        #expect(sync.asked.withLock { $0.prefix(3) } == [nil, "s1", "s2"])

        // A gap: the room checks its timeline.
        let reads = matrix.state.withLock { $0.timelineReads }
        sync.add(SyncResponse(nextBatch: "s4", joined: [.init(room: room, events: [], limited: true, prevBatch: "p3")]))
        try await eventually("the timeline checked") { matrix.state.withLock { $0.timelineReads } > reads }
        bridge.shutdown()
        xmpp.feed.finish()
        await task.value
    }

    @Test func anInvitationIntoALinkedRoomIsAccepted() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        try await store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc))
        let xmpp = FakeXMPPLink(), matrix = FakeMatrixLink(), sync = ScriptedSync()
        sync.add(SyncResponse(nextBatch: "s1"))
        sync.add(SyncResponse(nextBatch: "s2", invited: [.init(room: room, inviter: alice)]))
        let bridge = Bridge(store: store, xmpp: xmpp, matrix: matrix, naming: BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!,
                            logger: .disabled, linkPollInterval: .milliseconds(20), matrixSync: sync)
        let events = xmpp.events
        let task = Task { await bridge.run(xmppEvents: events) }
        try await eventually("the account joined the linked room") {
            matrix.state.withLock { $0.members[room]?[matrix.botUserID] != nil }
        }
        bridge.shutdown()
        xmpp.feed.finish()
        await task.value
    }

    @Test func theIntakeLeavesOutTheAccountsOwnAndTheFirstBatchesHistory() {
        let account = UserID("@relay:localhost")!
        let ghost = UserID("@_xmpp_romeo:localhost")!
        let response = SyncResponse(nextBatch: "s2", joined: [.init(room: room, events: [
            message("$1", "mine", from: account), message("$2", "ghost's", from: ghost), message("$3", "alice's", from: alice)], limited: true)])
        let isOurs: (UserID) -> Bool = { $0 == account || $0.localpart.hasPrefix("_xmpp_") }
        let intake = MatrixSyncIntake(response, isOurs: isOurs, history: true)
        #expect(intake.events.map(\.eventID) == [EventID("$3")!])
        #expect(intake.raw.map(\.eventID) == [EventID("$3")!])
        #expect(intake.gaps == [room])
        let first = MatrixSyncIntake(response, isOurs: isOurs, history: false)
        #expect(first.events.isEmpty && first.gaps.isEmpty)
    }
}
