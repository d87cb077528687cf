import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The delivery machine's effects (``MatrixDeliveryMachine/Action``): the message map lookups and records of MUC
/// messages, and their sends to Matrix as the senders' ghosts. Runs on the portal's actor.
extension Portal {
    func performMatrixDelivery(_ action: MatrixDeliveryMachine.Action) async -> PortalStateMachine.Input? {
        switch action {
        case .lookUpBridged(let message): return .matrixDelivery(await lookUpBridged(message))
        case .send(let delivery): return .matrixDelivery(await sendToMatrix(delivery))
        case .retry(let delivery, let pause):
            // Shutting down while waiting: catch-up bridges it at the next start.
            guard (try? await context.clock.sleep(until: context.clock.now() + pause)) != nil else { return nil }
            return .matrixDelivery(await sendToMatrix(delivery))
        case .recordReflection(let originID, let stanzaID): recordReflection(originID: originID, stanzaID: stanzaID)
        case .recordBridged(let mapping, let reactions): recordFromXMPP(mapping, reactions: reactions)
        case .recordRefused(let mapping): recordFromXMPP(mapping)
        case .tellSender(let occupant, let text): await sendPrivate(to: occupant, body: text)
        case .log(let entry): logger.log(entry.level, entry.message, metadata: entry.metadata)
        }
        return nil
    }

    /// Prepares the ghost when needed, then makes the delivery's calls as it, in order (each idempotent: its txnId
    /// comes from the stanza's key, so a retry after a partial failure repeats nothing). A retry after the homeserver
    /// was unavailable first looks for a copy its earlier attempt left (see
    /// ``PortalStateMachine/earlierCopy(of:in:mapped:)``).
    private func sendToMatrix(_ delivery: PortalStateMachine.MatrixDelivery) async -> MatrixDeliveryMachine.Input {
        if delivery.attempt > 0, let eventID = await earlierCopy(of: delivery) {
            logger.notice("A retried message had reached the homeserver already; not sent again", metadata: [
                "xmpp.stanza.id": delivery.key.rawValue, "matrix.event.id": eventID.rawValue])
            return .delivered(delivery, eventIDs: [eventID])
        }
        let matrix = context.matrix
        let room = link.matrixRoom
        var ghostReady = false
        do {
            if let setup = delivery.setup {
                try await prepareGhost(setup)
                ghostReady = true
            }
            let eventIDs = try await matrix.perform(delivery.sends, as: delivery.ghost, in: room, timestamp: delivery.message.delay) {
                try await self.importedFile($0, fallback: $1, ghost: delivery.ghost, key: delivery.key)
            }
            context.metrics.sentToMatrix(muc: link.muc, key: delivery.key, kind: delivery.kind, room: room,
                                         eventID: eventIDs.first ?? nil, now: context.clock.now())
            return .delivered(delivery, eventIDs: eventIDs)
        } catch MatrixLinkError.unavailable(let reason) {
            return .failed(delivery, .unavailable(reason), ghostReady: ghostReady)
        } catch MatrixLinkError.notInRoom(let reason) {
            if delivery.rejoinIsFinal { context.metrics.refusedByMatrix(muc: link.muc, key: delivery.key) }   // see ghostNotInRoom
            return .ghostNotInRoom(delivery, reason: reason)
        } catch where Task.isCancelled {
            // Cut short by shutdown, not refused: nothing is recorded, so the next start (or the standby taking over)
            // bridges it again from the archive. Recording it as refused would lose it for good.
            return .failed(delivery, .unavailable("cancelled by shutdown"), ghostReady: ghostReady)
        } catch {
            // Refused for good: the machine records it so it is never retried (counted once).
            context.metrics.refusedByMatrix(muc: link.muc, key: delivery.key)
            return .failed(delivery, .refused(Self.describe(error)), ghostReady: ghostReady)
        }
    }

    /// Whether the message was bridged already and, if not, the mapped messages it refers to (the store's
    /// `xmppLookUp(_:in:relayed:)`, `Store+MessageTargets.swift`: one call on the store's thread). A message among the
    /// gathered records (an archived copy of one bridged in this burst) is bridged already.
    private func lookUpBridged(_ message: RoomMessage) async -> MatrixDeliveryMachine.Input {
        if let stanzaID = message.stanzaID, pendingRecords.contains(where: { record in
            if case .fromXMPP(let mapping, _) = record { mapping.stanzaID == stanzaID } else { false }
        }) {
            return .lookedUp(message, bridged: true)
        }
        if let stanzaID = message.stanzaID, !message.references.refersToAnother, unmapped.contains(stanzaID) {
            return .lookedUp(message, bridged: false)   // a plain message refers to nothing: no targets to read
        }
        let room = link.matrixRoom
        do {
            let found = try await context.store.xmppLookUp(message, in: room, relayed: context.matrixRelay != nil)
            return found.bridged ? .lookedUp(message, bridged: true) : .lookedUp(message, bridged: false, targets: found.targets)
        } catch {
            // Not dropped while the store is out of reach: the message waits (and XMPP reading with it) until it is back.
            if await context.storeIsBack(after: error) { return await lookUpBridged(message) }
            logger.error("Message map lookup failed", metadata: ["error": "\(error)"])
            return .lookedUp(message, bridged: nil)
        }
    }

    /// Our own message came back from the MUC: its origin-id marks it delivered with the room's stanza-id (the
    /// receipt); otherwise the stanza-id is at least the room's new resume point. Gathered, not written yet
    /// (``recordPending()``).
    private func recordReflection(originID: OriginID?, stanzaID: StanzaID?) {
        context.metrics.reflected(muc: link.muc, stanzaID: stanzaID)
        pendingRecords.append(.reflection(ReflectionReceipt(originID: originID, stanzaID: stanzaID)))
    }

    /// Records the gathered reflections and XMPP messages in one write (``Store/record(room:_:)``); returns whether
    /// they are durable (true when there were none). While the store is out of reach or the disk full, `durably`
    /// waits until it writes again. A write that fails otherwise (a record the store refuses) is tried again one
    /// record at a time, so only the refused one is lost, as when each was written alone: it is logged, and a later
    /// record moves the resume point past it.
    ///
    /// Counted here, once per message: an origin-id comes back only from the update that moves its mapping to
    /// `delivered` — a second reflection (a resend that also arrived, an archived copy) finds it delivered already.
    /// A bridged XMPP message follows only a successful send (`MatrixDeliveryMachine.Input.delivered`), and a message
    /// is sent only when neither the map nor the gathered records have its stanza-id yet — retries end here once, the
    /// copies addressed to puppets are ignored, and archived copies of bridged messages are dropped by the lookup
    /// before they are sent. (A room that assigns no stanza-id has no archive either: its messages arrive once, live.)
    func recordPending() async -> Bool {
        guard !pendingRecords.isEmpty else { return true }
        let records = pendingRecords
        pendingRecords = []
        if await record(records) { return true }
        guard records.count > 1 else { return false }
        var all = true
        for record in records {
            if await !self.record([record]) { all = false }
        }
        return all
    }

    /// Writes `records` in one commit and counts what they delivered; logs a failure and returns false.
    private func record(_ records: [RoomRecord]) async -> Bool {
        let room = link.matrixRoom
        do {
            let delivered = try await context.durably { try await context.store.record(room: room, records) }
            let now = context.clock.now()
            for originID in delivered { context.metrics.deliveredToXMPP(room: room, originID: originID, now: now) }
            for case .fromXMPP(let mapping, _) in records where mapping.state != .failed {
                context.metrics.bridgedToMatrix(room: room, eventID: mapping.eventID, now: now)
            }
            return true
        } catch {
            logger.error("Could not record what the room's messages did", metadata: [
                "xmpp.records": "\(records.count)", "error": "\(error)"])
            return false
        }
    }

    /// A bridged XMPP message, or one Matrix refused for good (mapped `failed`, so it is not retried): gathered, not
    /// written yet (``recordPending()``).
    private func recordFromXMPP(_ mapping: MessageMapping, reactions: ReactionChange = ReactionChange()) {
        if let stanzaID = mapping.stanzaID { unmapped.remove(stanzaID) }
        pendingRecords.append(.fromXMPP(mapping, reactions: reactions))
    }

    /// Reads, in one store call, which of the burst's plain XMPP messages from others (not reflections of ours) the
    /// map lacks (``unmapped``), so that their lookups need none. What the burst bridges goes through
    /// ``recordFromXMPP(_:reactions:)``, which takes its stanza-id out again, so a second copy of a message (live, then
    /// from the archive) is still found bridged. Not worth a call for a single message; on a failure each message is
    /// looked up alone, as before.
    func lookAhead(_ burst: [PortalQueue.Entry]) async {
        var seen: Set<StanzaID> = []
        let stanzaIDs = burst.compactMap { entry -> StanzaID? in
            // Only the copy addressed to the bridge's own occupant is bridged; the component gets one per puppet.
            guard case .xmppMessage(let message) = entry.event, message.to == nil || message.to == context.naming.botOccupant,
                  let stanzaID = machine.plainLookUpKey(message), seen.insert(stanzaID).inserted else { return nil }
            return stanzaID
        }
        guard stanzaIDs.count > 1,
              let mapped = try? await context.store.mappedStanzaIDs(link.matrixRoom, among: stanzaIDs) else { return }
        unmapped = seen.subtracting(mapped)
    }
}
