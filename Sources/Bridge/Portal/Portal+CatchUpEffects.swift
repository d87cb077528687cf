import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The catch-up machine's effects (``CatchUpMachine/Action``): the room's features, the XEP-0313 catch-up, the inbox,
/// and the Matrix timeline check.
///
/// The timeline check finds messages the homeserver stored but never pushed to the appservice.
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
    func performCatchUp(_ action: CatchUpMachine.Action) async -> PortalStateMachine.Input? {
        switch action {
        case .readRoomFeatures: return .catchUp(await readRoomFeatures())
        case .recordRoomFeatures(let features): await recordRoomFeatures(features)
        case .fetchArchive(let after, let since): return .catchUp(await fetchArchive(after: after, since: since))
        case .readTimeline: return .catchUp(await readTimeline())
        case .enqueueStranded(let missed): return .catchUp(await enqueueStranded(missed))
        case .readInbox: return .catchUp(await readInbox())
        case .log(let entry): logger.log(entry.level, entry.message, metadata: entry.metadata)
        }
        return nil
    }

    private func readRoomFeatures() async -> CatchUpMachine.Input {
        do {
            return .featuresRead(try await context.xmpp.roomFeatures(room: link.muc, as: context.naming.botOccupant))
        } catch {
            logger.debug("disco#info of the MUC failed", metadata: ["error": "\(error)"])
            return .featuresRead(nil)
        }
    }

    private func fetchArchive(after: StanzaID?, since: Date?) async -> CatchUpMachine.Input {
        do {
            let messages = try await context.xmpp.archive(room: link.muc, as: context.naming.botOccupant, after: after, since: since)
            context.metrics.archiveRead()
            context.metrics.caughtUp(side: "xmpp", count: messages.count)
            return .archiveFetched(messages)
        } catch {
            logger.warning("Archive catch-up failed", metadata: ["error": "\(error)"])
            return .archiveFetched(nil)
        }
    }

    private func recordRoomFeatures(_ features: RoomFeatures) async {
        let room = link.matrixRoom
        do {
            try await context.durably { try await context.store.updateRoomLinkArchive(room, archive: features.canCatchUp) }
        } catch {
            logger.error("Could not record the MUC's features", metadata: ["error": "\(error)"])
        }
    }

    /// Reads this room's inbox from the store, in arrival order, with the rows that no longer decode (the machine's
    /// ``CatchUpMachine/drainOrder(_:timeline:)`` decides the order of handling, and drops those rows).
    private func readInbox() async -> CatchUpMachine.Input {
        let entries: [InboxEntry]
        do {
            let room = link.matrixRoom
            entries = try await context.durably { try await context.store.inbox(room) }
        } catch {
            logger.error("Could not read the Matrix inbox", metadata: ["error": "\(error)"])
            return .inboxRead(nil)
        }
        let (queued, undecodable) = QueuedMatrixEvent.decoding(entries)
        for item in queued {
            if let kind = item.event.metricsKind {   // for the kind label; no latency (entered earlier)
                context.metrics.enteredFromMatrix(room: link.matrixRoom, originID: context.naming.originID(for: item.event.eventID),
                                                  kind: kind, at: nil, now: context.clock.now())
            }
        }
        return .inboxRead(queued, undecodable: undecodable)
    }

    /// How far back a check reads (beyond the interval between self-checks).
    static let timelineLookback: TimeInterval = 600
    static let timelinePageSize = 100
    static let timelineMaxPages = 5

    /// Reads the recent timeline back to the link's activation (at most ``timelineLookback``) and which of its events
    /// the bridge has seen, for ``CatchUpMachine/Input/timelineRead(_:)``. Empty when the link was never active or the
    /// timeline could not be read (the drain goes on in arrival order rather than stall the room on a timeline it
    /// cannot read); nil when shutdown cut it short (the drain must not go on without it).
    private func readTimeline() async -> CatchUpMachine.Input {
        let room = link.matrixRoom
        do {
            guard let activeSince = try await context.store.activeSince(room) else { return .timelineRead(CatchUpMachine.TimelineRead()) }
            let floor = max(activeSince.addingTimeInterval(-2), context.clock.wallNow().addingTimeInterval(-Self.timelineLookback))
            let queuedThrough = try await context.store.lastInboxSeq()
            let timeline = try await recentTimeline(since: floor)
            let seen = try await context.store.seenMatrixEvents(room, among: timeline.map(\.eventID))
            return .timelineRead(CatchUpMachine.TimelineRead(entries: timeline, seen: seen, queuedThrough: queuedThrough,
                                                                 now: context.clock.wallNow()))
        } catch {
            if Task.isCancelled { return .timelineRead(nil) }
            logger.warning("Could not check the Matrix timeline", metadata: ["error": "\(error)"])
            return .timelineRead(CatchUpMachine.TimelineRead())
        }
    }

    /// Queues the messages the homeserver never pushed (the machine found them in the timeline).
    private func enqueueStranded(_ missed: [MatrixRoomEvent]) async -> CatchUpMachine.Input {
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
