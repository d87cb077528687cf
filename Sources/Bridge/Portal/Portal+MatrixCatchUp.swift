import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// Matrix-side catch-up: messages the homeserver stored but never pushed to the appservice.
///
/// Synapse can strand a transaction: when its retry of an appservice that was down finds nothing left to send while
/// a new event's transaction is still being written, that transaction is stored as unsent and waits for the next
/// outage (scheduler `_TransactionController.send` checks the service state before it creates the transaction). The
/// portal therefore reads the room's recent timeline as the bot — before the first drain after each activation,
/// before the events behind a hole in the homeserver's transaction ids (``TransactionGapDetector``), a few times in
/// the background after a start or a failed transaction (a stranded message with nothing after it), and on every
/// self-check — and queues what it never saw in the durable inbox, drained in the timeline's order. The homeserver's
/// late copy is then a duplicate the inbox and the message map drop. Messages with no hole before them go straight
/// through: the check costs a `/messages` round trip only when something may be missing.
extension Portal {
    /// How far back a check reads (beyond the interval between self-checks).
    static let timelineLookback: TimeInterval = 600
    static let timelinePageSize = 100
    static let timelineMaxPages = 5

    /// Reads the recent timeline and queues the bridgeable messages the bridge never saw that are stranded (chosen by
    /// ``PortalStateMachine/strandedMessages(in:seen:now:)``). Returns the timeline order (event id → index,
    /// oldest first, and how far the inbox was queued when it was read) whenever it read the timeline, so the drain
    /// follows it — also when nothing was missing: a transaction the homeserver delivered late put its events behind
    /// later ones in the inbox; empty when the timeline could not be read; nil when shutdown cut the check short (the
    /// drain must not go on without it).
    func recoverUnpushedMatrixMessages() async -> PortalStateMachine.TimelineOrder? {
        let room = link.matrixRoom
        do {
            guard let activeSince = try await context.store.activeSince(room) else { return PortalStateMachine.TimelineOrder() }
            let floor = max(activeSince.addingTimeInterval(-2), context.clock.wallNow().addingTimeInterval(-Self.timelineLookback))
            let queuedThrough = try await context.store.lastInboxSeq()
            let timeline = try await recentTimeline(since: floor)
            let seen = try await context.store.seenMatrixEvents(room, among: timeline.map(\.eventID))
            // A homeserver repeating an event across pages must not crash us: its first place counts.
            let order = PortalStateMachine.TimelineOrder(
                positions: Dictionary(timeline.enumerated().map { ($1.eventID, $0) }, uniquingKeysWith: { first, _ in first }),
                queuedThrough: queuedThrough)
            let missed = machine.strandedMessages(in: timeline, seen: seen, now: context.clock.wallNow())
            guard !missed.isEmpty else { return order }
            let added = try await context.store.enqueueInbox(try missed.map { (room, $0.eventID, try $0.inboxPayload()) })
            guard !added.isEmpty else { return order }
            context.metrics.caughtUp(side: "matrix", count: added.count)
            // Usually the homeserver's retry queue after a restart (it pushes them later; the copies are dropped);
            // rarely a stranded transaction.
            logger.info("Took Matrix messages the homeserver had not pushed from the room's timeline", metadata: [
                "matrix.event.ids": added.map(\.eventID.rawValue).joined(separator: ","),
            ])
            return order
        } catch {
            // Stopping: the drain waits for the next run's check. Any other failure: the drain goes on in arrival
            // order rather than stall the room on a timeline it cannot read.
            if Task.isCancelled { return nil }
            logger.warning("Could not check the Matrix timeline", metadata: ["error": "\(error)"])
            return PortalStateMachine.TimelineOrder()
        }
    }

    /// The room's timeline back to `floor` (or ``timelineMaxPages`` pages), oldest first.
    private func recentTimeline(since floor: Date) async throws -> [MatrixTimelineEntry] {
        var newestFirst: [MatrixTimelineEntry] = []
        var token: String?
        for _ in 0..<Self.timelineMaxPages {
            let page = try await context.matrix.timeline(link.matrixRoom, from: token, limit: Self.timelinePageSize)
            for entry in page.entries {
                if entry.timestamp < floor { return newestFirst.reversed() }
                newestFirst.append(entry)
            }
            guard let next = page.next else { break }
            token = next
        }
        return newestFirst.reversed()
    }
}
