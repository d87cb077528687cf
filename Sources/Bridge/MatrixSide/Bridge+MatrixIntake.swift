import IsthmusCommon
import IsthmusStore

/// The bridge's Matrix intake: a homeserver transaction's (or a sync batch's) events into the durable inbox, handed to
/// their portals, to the DMs or to the gateway's rooms, and the transaction-gap checks around it.
extension Bridge {
    /// Accepts Matrix events from a homeserver transaction: events of linked rooms and of DM rooms (also a ghost's
    /// invitation that opens one) are written to the durable inbox (this returns only once they are) and handed as they
    /// are, in order, to their portals or to ``DirectChats``. Events of other rooms are ignored. `transaction`: the
    /// homeserver's id for the batch, when there is one (see ``TransactionGapDetector``); it is recorded as processed
    /// in the same commit as the events (alone when none is kept), as ``AppServiceHandler/handle(_:)`` requires.
    /// Called from the appservice listener, one transaction at a time; safe from any context.
    /// If it throws, nothing is recorded and the homeserver will retry the transaction later — and may then strand the
    /// next one (see `Portal+CatchUpEffects`), so portals check their timelines in the background a few times.
    public func acceptMatrixEvents(_ events: [MatrixRoomEvent], transaction: TransactionID? = nil) async throws {
        try await acceptMatrixEvents(events, mark: transaction.map(IntakeMark.transaction))
    }

    /// ``acceptMatrixEvents(_:transaction:)`` for any intake: `mark` is recorded in the commit that keeps the events
    /// (alone when none is kept) — a transaction processed, or (Matrix client mode) the sync position after the batch.
    /// Only a homeserver transaction's id shows holes in what the homeserver pushed (``TransactionGapDetector``); a
    /// sync's gaps are its `limited` timelines.
    /// `limited` (a sync's `limited` timelines): rooms missing events before these; each checks its timeline first —
    /// before this batch's events, which wait behind the check, or at once when the batch has none for it.
    public func acceptMatrixEvents(_ events: [MatrixRoomEvent], mark: IntakeMark?, limited: Set<RoomID> = []) async throws {
        let accepted = context.clock.now()
        var transaction: TransactionID?
        if case .transaction(let id)? = mark { transaction = id }
        let gap: TransactionGapDetector.Gap
        if case .syncPosition? = mark { gap = .none } else { gap = gaps.withLock { $0.observe(transaction, now: accepted) } }
        do {
            // A full disk or an unreachable database: refused (500) before anything is read, so the homeserver
            // retries it later.
            if context.writeGate.isClosed { throw StoreClosedError() }
            var linked: Set<RoomID> = []
            var direct: Set<RoomID> = []
            var hosted: Set<RoomID> = []
            var hostedAndLinked: Set<RoomID> = []
            if !events.isEmpty {
                let rooms = Set(events.map(\.room))
                linked = try await context.store.linkedRooms(among: rooms)
                if let gatewayRooms {
                    // The rooms the gateway hosts for XMPP users keep their events in the inbox too — unless linked:
                    // the portal consumes those, and the gateway gets a copy.
                    let all = await gatewayRooms.hostedRooms(among: rooms)
                    hostedAndLinked = all.intersection(linked)
                    hosted = all.subtracting(linked)
                }
                // Only rooms that are not linked can be DMs: most transactions have none, and skip the store read.
                let others = rooms.subtracting(linked).subtracting(hosted)
                if !others.isEmpty {
                    direct = try await context.store.directRooms(among: others)
                    // A Matrix user inviting a ghost into a new room: a DM from now on (its invite queued below).
                    let unknown = others.subtracting(direct)
                    if !unknown.isEmpty { direct.formUnion(try await directChats.openFromInvitations(events, in: unknown)) }
                }
            }
            let rows = try MatrixIntake.rows(events, linked: linked, direct: direct, hosted: hosted)
            guard !rows.isEmpty else {
                if let mark { try await context.store.record(mark) }
                for room in limited { directory.portal(for: room)?.enqueue(.checkTimeline) }
                // The hole counts even when this transaction brings nothing to keep (only our ghosts' echoes, or
                // other rooms' events): the next one would show no hole, and what sits behind it would go out
                // before the stranded message.
                if MatrixIntake.gapAction(gap, handOffs: []) == .checkEveryRoom { flagTimelineGap(transaction) }
                return
            }
            // In flight before the commit: a portal may take the rows from the store (a drain, a timeline check) and
            // send them before this call returns. A replay of a delivered message leaves an entry that expires.
            // (Linked rooms only: the latency metrics follow room messages to their MUC reflection, which DMs lack.)
            for event in events where linked.contains(event.room) {
                if let kind = event.metricsKind {
                    context.metrics.enteredFromMatrix(room: event.room, originID: context.naming.originID(for: event.eventID),
                                                      kind: kind, at: accepted, now: accepted)
                }
            }
            let added = try await context.store.enqueueInbox(rows.map { ($0.room, $0.eventID, $0.payload) }, recording: mark)
            let handOffs = MatrixIntake.handOffs(added, events: events, direct: direct, hosted: hosted)
            for room in limited {
                let waiting = handOffs.contains { $0.room == room && $0.toPortal }
                directory.portal(for: room)?.enqueue(waiting ? .timelineGap : .checkTimeline)
            }
            switch MatrixIntake.gapAction(gap, handOffs: handOffs) {
            case .checkEveryRoom:
                flagTimelineGap(transaction)
            case .checkRooms(let rooms):
                context.logger.debug("A homeserver transaction is still missing; this one's rooms check their timelines first",
                                     metadata: ["matrix.txn.id": transaction?.rawValue ?? "-"])
                for room in rooms { directory.portal(for: room)?.enqueue(.timelineGap) }
            case .none:
                break
            }
            for handOff in handOffs {
                for item in handOff.queued where item.event.content == .encrypted { context.metrics.encryptedEvent(direct: handOff.direct) }
                if handOff.direct {
                    directChats.enqueue(.matrixEvents(handOff.queued))
                } else if handOff.hosted {
                    await gatewayRooms?.matrix(handOff.queued, durable: true)
                } else {
                    directory.portal(for: handOff.room)?.enqueue(.matrixEvents(handOff.queued))
                    if hostedAndLinked.contains(handOff.room) { await gatewayRooms?.matrix(handOff.queued, durable: false) }
                }
            }
        } catch {
            _ = context.writeGate.noteFailure(error)
            gaps.withLock { $0.arm(now: context.clock.now()) }
            control.yield(.homeserverRetrying)
            throw error
        }
    }

    /// Whether ``acceptMatrixEvents(_:transaction:)`` recorded `transaction` as processed. Reads the store.
    func isTransactionProcessed(_ transaction: TransactionID) async throws -> Bool {
        try await context.store.isTransactionProcessed(transaction)
    }

    /// Of `events` in `room`, those ``acceptMatrixEvents(_:transaction:)`` queued or a portal bridged. Reads the store.
    func seenMatrixEvents(_ events: [EventID], in room: RoomID) async throws -> Set<EventID> {
        try await context.store.seenMatrixEvents(room, among: events)
    }

    /// A transaction before `transaction` may be stranded: every room checks its timeline before its next Matrix events.
    func flagTimelineGap(_ transaction: TransactionID?) {
        context.logger.info("A homeserver transaction may be missing; rooms check their timelines first",
                            metadata: ["matrix.txn.id": transaction?.rawValue ?? "-"])
        for portal in directory.all { portal.enqueue(.timelineGap) }
    }

    /// Hands typing or receipts to the portal of `room`, if it is linked: not stored, not waited for (best effort).
    func routeEphemeral(_ event: MatrixEphemeral, to room: RoomID) {
        directory.portal(for: room)?.enqueue(.matrixEphemeral(event))
    }
}
