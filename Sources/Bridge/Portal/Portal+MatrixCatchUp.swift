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

    /// Reads the recent timeline back to the link's activation (at most ``timelineLookback``) and which of its events
    /// the bridge has seen, for ``PortalStateMachine/timelineRead(_:)``. Empty when the link was never active or the
    /// timeline could not be read (the drain goes on in arrival order rather than stall the room on a timeline it
    /// cannot read); nil when shutdown cut it short (the drain must not go on without it).
    func readTimeline() async -> PortalStateMachine.Input {
        let room = link.matrixRoom
        do {
            guard let activeSince = try await context.store.activeSince(room) else { return .timelineRead(PortalStateMachine.TimelineRead()) }
            let floor = max(activeSince.addingTimeInterval(-2), context.clock.wallNow().addingTimeInterval(-Self.timelineLookback))
            let queuedThrough = try await context.store.lastInboxSeq()
            let timeline = try await recentTimeline(since: floor)
            let seen = try await context.store.seenMatrixEvents(room, among: timeline.map(\.eventID))
            return .timelineRead(PortalStateMachine.TimelineRead(entries: timeline, seen: seen, queuedThrough: queuedThrough,
                                                                 now: context.clock.wallNow()))
        } catch {
            if Task.isCancelled { return .timelineRead(nil) }
            logger.warning("Could not check the Matrix timeline", metadata: ["error": "\(error)"])
            return .timelineRead(PortalStateMachine.TimelineRead())
        }
    }

    /// Queues the messages the homeserver never pushed (the machine found them in the timeline).
    func enqueueStranded(_ missed: [MatrixRoomEvent]) async -> PortalStateMachine.Input {
        let room = link.matrixRoom
        do {
            let rows = try missed.map { (room, $0.eventID, try $0.inboxPayload()) }
            let added = try await context.durably { try await context.store.enqueueInbox(rows) }
            guard !added.isEmpty else { return .strandedQueued(.done) }
            context.metrics.caughtUp(side: "matrix", count: added.count)
            // Usually the homeserver's retry queue after a restart (it pushes them later; the copies are dropped);
            // rarely a stranded transaction.
            logger.info("Took Matrix messages the homeserver had not pushed from the room's timeline", metadata: [
                "matrix.event.ids": added.map(\.eventID.rawValue).joined(separator: ","),
            ])
            return .strandedQueued(.done)
        } catch {
            if Task.isCancelled { return .strandedQueued(.cancelled) }
            logger.warning("Could not queue the Matrix messages the homeserver had not pushed", metadata: ["error": "\(error)"])
            return .strandedQueued(.failed)
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
