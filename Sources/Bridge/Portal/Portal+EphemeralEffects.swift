import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The I/O of typing notices, chat states and read markers: message-map lookups (on the portal's actor) and the
/// best-effort sends (on the ``EphemeralSender``'s worker). Every decision was made by ``EphemeralMachine``.
extension Portal {
    /// Performs one action of the ephemeral sub-machine; returns its outcome when the machine waits for one.
    func performEphemeral(_ action: EphemeralMachine.Action) async -> PortalStateMachine.Input? {
        switch action {
        case .send(let send): ephemeralSender.submit(send)
        case .scheduleFlush(let instant): schedule(.ephemeralFlush, at: instant)
        case .resolveReadMarkers(let query): return .ephemeral(await resolveReadMarkers(query))
        case .log(let entry): logger.log(entry.level, entry.message, metadata: entry.metadata)
        }
        return nil
    }

    /// The mapped messages a read marker names: Matrix events by id; an XMPP id as the room's stanza-id, else (liberal
    /// on input, as for replies) one of our origin-ids.
    private func resolveReadMarkers(_ query: EphemeralMachine.ReadMarkerQuery) async -> EphemeralMachine.Input {
        let (store, room) = (context.store, link.matrixRoom)
        do {
            var found: [MessageMapping] = []
            switch query {
            case .matrix(let reads):
                for event in Set(reads.values) {
                    if let mapping = try await store.mapping(room: room, eventID: event) { found.append(mapping) }
                }
            case .xmpp(_, let id):
                if let stanzaID = StanzaID(id), let mapping = try await store.mapping(room: room, stanzaID: stanzaID) {
                    found.append(mapping)
                } else if let originID = OriginID(id), let mapping = try await store.mapping(room: room, originID: originID) {
                    found.append(mapping)
                }
            }
            return .readMarkersResolved(query, found)
        } catch {
            logger.warning("Message map lookup for a read marker failed", metadata: ["error": "\(error)"])
            return .readMarkersResolved(query, nil)
        }
    }

    /// Performs one best-effort send. A failure is logged at debug level and dropped: the next typing change or
    /// marker supersedes it anyway. Runs on the ``EphemeralSender``'s worker, not on the portal's actor.
    nonisolated static func performSend(_ send: EphemeralSend, link: RoomLink, context: BridgeContext, logger: Logger) async {
        do {
            switch send {
            case .typing(let ghost, let typing):
                try await context.matrix.setTyping(typing, as: ghost, in: link.matrixRoom, timeout: EphemeralMachine.typingTimeout)
            case .readReceipt(let ghost, let event):
                try await context.matrix.sendReadReceipt(for: event, as: ghost, in: link.matrixRoom)
            case .chatState(_, let occupant, let state):
                try await context.xmpp.sendSignals(room: link.muc, from: occupant, ChatSignals(chatState: state))
            case .displayed(_, let occupant, let id):
                try await context.xmpp.sendSignals(room: link.muc, from: occupant, ChatSignals(displayed: id))
            }
        } catch {
            logger.debug("A typing notice or read marker was not delivered", metadata: ["error": "\(error)"])
        }
    }
}
