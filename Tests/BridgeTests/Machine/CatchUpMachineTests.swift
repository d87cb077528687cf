import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
@testable import Bridge

/// The catch-up sub-machine on its own: the room's features, the archive query, the drain's timeline check and order.
@Suite struct CatchUpMachineTests {
    typealias Output = CatchUpMachine.Output

    let f = MachineFixture()
    var room: CatchUpMachine.Room { CatchUpMachine.Room(isBridgeable: f.machine.isBridgeableMessage) }

    /// What the machine returns, without its log lines.
    func outputs(_ machine: inout CatchUpMachine, _ input: CatchUpMachine.Input) -> [Output] {
        machine.receive(input, in: room).filter { if case .perform(.log) = $0 { false } else { true } }
    }

    func notices(_ machine: inout CatchUpMachine, _ features: RoomFeatures) -> Int {
        machine.receive(.featuresRead(features), in: room).filter {
            if case .perform(.log(let entry)) = $0 { entry.level == .notice } else { false }
        }.count
    }

    @Test func theFeaturesAreRecordedAndHandedOnAndAFailedReadKeepsTheLastOnes() {
        var m = CatchUpMachine()
        let features = RoomFeatures(stanzaIDs: true, archive: true, name: "Lounge")
        #expect(outputs(&m, .readFeatures) == [.perform(.readRoomFeatures)])
        #expect(outputs(&m, .featuresRead(features)) == [.perform(.recordRoomFeatures(features)), .portal(.featuresKnown(features))])
        #expect(m.features == features)
        let failed = m.receive(.featuresRead(nil), in: room)
        guard case .perform(.log(let entry))? = failed.first, failed.count == 1 else { Issue.record("expected one log line, got \(failed)"); return }
        #expect(entry.level == .warning)
        #expect(m.features == features)
    }

    @Test func aMissingArchiveIsSaidOncePerProcessAndAgainOnlyAfterItHadOne() {
        var m = CatchUpMachine()
        let none = RoomFeatures(stanzaIDs: true, archive: false), some = RoomFeatures(stanzaIDs: true, archive: true)
        #expect(notices(&m, none) == 1)
        #expect(notices(&m, none) == 0)
        #expect(notices(&m, some) == 0)
        #expect(notices(&m, none) == 1)
    }

    @Test func theArchiveIsAskedAfterTheResumePointAndNotAtAllWithoutAnArchive() {
        var m = CatchUpMachine()
        let resumed = f.snapshot(last: StanzaID("s9"))
        #expect(outputs(&m, .roomLoaded(resumed)) == [.perform(.fetchArchive(after: StanzaID("s9"), since: nil))])
        #expect(outputs(&m, .roomLoaded(f.snapshot(first: true))) == [], "a first activation bridges nothing from before the link")
        _ = m.receive(.featuresRead(RoomFeatures(stanzaIDs: true, archive: false)), in: room)
        #expect(outputs(&m, .roomLoaded(resumed)) == [], "a room without an archive is not asked")
    }

    @Test func archivedMessagesGoToTheRouterMarkedAsFromTheArchive() {
        var m = CatchUpMachine()
        let message = f.groupchat("romeo", "while away", stanzaID: "s10"), archived = f.groupchat("romeo", "while away", stanzaID: "s10", archived: true)
        #expect(outputs(&m, .archiveFetched([message])) == [.portal(.bridgeArchived([archived]))])
        #expect(outputs(&m, .archiveFetched(nil)) == [], "a failed query bridges nothing (the next activation asks again)")
    }

    @Test func aDrainChecksTheTimelineOnlyWhenACheckIsDueAndThenFollowsItsOrder() {
        var m = CatchUpMachine()
        #expect(outputs(&m, .drainFromStore) == [.perform(.readInbox)])
        #expect(outputs(&m, .timelineCheckDue) == [])
        #expect(outputs(&m, .drainFromStore) == [.perform(.readTimeline)])
        #expect(!m.timelineCheckPending)
        let a = f.text(1, "a"), b = f.text(2, "b")
        #expect(outputs(&m, .timelineRead(f.timelineRead([b, a], queuedThrough: 2))) == [.perform(.readInbox)])
        #expect(outputs(&m, .inboxRead([a, b], undecodable: [])) == [.portal(.drain([b, a], dropping: []))])
        // The next drain without a check goes in arrival order again.
        #expect(outputs(&m, .drainFromStore) == [.perform(.readInbox)])
        #expect(outputs(&m, .inboxRead([a, b], undecodable: [])) == [.portal(.drain([a, b], dropping: []))])
    }

    @Test func strandedMessagesAreQueuedFirstAndAFailedQueueMakesTheNextDrainCheckAgain() {
        var m = CatchUpMachine()
        let five = f.text(5), stranded = f.text(6, "stranded")
        _ = m.receive(.timelineCheckDue, in: room)
        _ = m.receive(.drainFromStore, in: room)
        #expect(outputs(&m, .timelineRead(f.timelineRead([stranded, five], queuedThrough: 5, unseen: [stranded])))
                == [.perform(.enqueueStranded([stranded.event]))])
        #expect(outputs(&m, .strandedQueued(.done)) == [.perform(.readInbox)])
        #expect(!m.timelineCheckPending)
        #expect(outputs(&m, .strandedQueued(.failed)) == [.perform(.readInbox)])
        #expect(m.timelineCheckPending)
    }

    @Test func aCheckOrReadCutShortBlocksTheDrainAndKeepsTheCheckDue() {
        var m = CatchUpMachine()
        _ = m.receive(.timelineCheckDue, in: room)
        _ = m.receive(.drainFromStore, in: room)
        #expect(outputs(&m, .timelineRead(nil)) == [.portal(.drainBlocked)])
        #expect(m.timelineCheckPending)
        _ = m.receive(.drainFromStore, in: room)
        #expect(outputs(&m, .strandedQueued(.cancelled)) == [.portal(.drainBlocked)])
        #expect(m.timelineCheckPending)
        #expect(outputs(&m, .inboxRead(nil)) == [.portal(.drainBlocked)])
    }

    @Test func undecodableRowsAreHandedOnToBeDropped() {
        var m = CatchUpMachine()
        let row = UndecodableInboxRow(seq: 3, eventID: EventID("$bad")!, room: f.room)
        let good = f.text(4)
        #expect(outputs(&m, .inboxRead([good], undecodable: [row])) == [.portal(.drain([good], dropping: [row]))])
    }

    @Test func theDrainOrderPermutesOnlyTheEntriesTheTimelineNames() {
        let f = MachineFixture()
        // `old` is older than the check looked: it keeps its place. `late` arrived after it: it stays last.
        let old = f.text(1, "old"), b = f.text(2, "b"), c = f.text(3, "c"), a = f.text(4, "a"), late = f.text(5, "late")
        let timeline = f.timeline([a, b, c], queuedThrough: 4)
        #expect(CatchUpMachine.drainOrder([old, b, c, a, late], timeline: timeline).map(\.seq) == [1, 4, 2, 3, 5])
        #expect(CatchUpMachine.drainOrder([old, b, c, a, late], timeline: .init()).map(\.seq) == [1, 2, 3, 4, 5])
        #expect(CatchUpMachine.drainOrder([], timeline: timeline).isEmpty)
    }

    /// Seen in FailoverTests on ejabberd: the check read the timeline with `five` (stranded) and `six` in it; `seven`
    /// was pushed before the inbox was read, and `five`, recovered, was queued last. `seven` kept its place and went
    /// out before `six`. What arrived after the timeline was read, unnamed, is newer than all it names: it goes last.
    @Test func whatArrivedAfterTheTimelineWasReadGoesAfterEverythingItNames() {
        let f = MachineFixture()
        let four = f.text(23, "four"), six = f.text(24, "six"), seven = f.text(25, "seven"), five = f.text(26, "five")
        let timeline = f.timeline([four, five, six], queuedThrough: 24)
        #expect(CatchUpMachine.drainOrder([four, six, seven, five], timeline: timeline).map(\.seq) == [23, 26, 24, 25])
        // An unnamed entry queued before the read (older than the check looked) still keeps its place.
        let old = f.text(22, "old")
        #expect(CatchUpMachine.drainOrder([old, four, six, seven, five], timeline: timeline).map(\.seq) == [22, 23, 26, 24, 25])
    }

    @Test func onlyBridgeableUnseenMessagesBeforeASeenOneOrOldEnoughAreStranded() {
        let f = MachineFixture()
        let now = Date()
        func entry(_ queued: QueuedMatrixEvent?, id: String? = nil, age: Int64) -> MatrixTimelineEntry {
            MatrixTimelineEntry(eventID: queued?.event.eventID ?? EventID("$\(id!)")!, timestamp: now.addingTimeInterval(-Double(age)),
                                age: .seconds(age), event: queued?.event)
        }
        let before = f.text(1), ghostMessage = f.text(2, from: f.ghost(of: "romeo")), image = f.text(3, "", msgtype: .image)
        let seen = f.text(4), young = f.text(5), old = f.text(6)
        let timeline = [entry(before, age: 40), entry(ghostMessage, age: 40), entry(image, age: 40), entry(nil, id: "member", age: 40),
                        entry(seen, age: 35), entry(young, age: 1), entry(old, age: 31)]
        #expect(CatchUpMachine.strandedMessages(in: timeline, seen: [seen.event.eventID], now: now, isBridgeable: f.machine.isBridgeableMessage) == [before.event, old.event])
    }
}
