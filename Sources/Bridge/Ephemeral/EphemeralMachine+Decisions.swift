import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// What each input of ``EphemeralMachine`` becomes.
extension EphemeralMachine {
    // MARK: XMPP → Matrix

    /// The typing part of a live MUC message from an occupant (not ours): a chat state, or a body, which ends typing.
    mutating func occupantTyping(_ message: RoomMessage, in room: some Room, now: ContinuousClock.Instant) -> [Action] {
        guard !message.fromArchive, message.delay == nil else { return [] }
        let typing: Bool
        switch message.signals.chatState {
        case .composing? where message.body == nil: typing = true
        case nil where message.body == nil: return []
        default: typing = false
        }
        // Cheap checks first: this runs for every message. Off only for a ghost shown typing.
        guard let ghost = room.ghostOfOccupant(message.nick), typing || self.typing.lastSent(ghost) != nil,
              room.joinedGhost(message.nick, message.realJID) == ghost else { return [] }
        guard let value = self.typing.offer(typing, for: ghost, now: now) else { return scheduleFlush() }
        return [.send(.typing(ghost: ghost, value))] + scheduleFlush()
    }

    /// A `<displayed/>` marker in a live signal-only message from an occupant whose ghost is in the Matrix room: the
    /// message map says which event it names.
    func occupantDisplayed(_ message: RoomMessage, in room: some Room) -> [Action] {
        guard let id = message.signals.displayed, message.isSignalOnly, !message.fromArchive, message.delay == nil,
              let ghost = room.joinedGhost(message.nick, message.realJID) else { return [] }
        return [.resolveReadMarkers(.xmpp(ghost: ghost, id: id))]
    }

    // MARK: Matrix → XMPP

    /// Matrix typing or receipts of this room.
    mutating func matrix(_ event: MatrixEphemeral, in room: some Room, now: ContinuousClock.Instant) -> [Action] {
        switch event {
        case .typing(let users):
            let typing = users.filter { room.isBridged($0) }
            let started = typing.subtracting(matrixTyping), stopped = matrixTyping.subtracting(typing)
            matrixTyping = typing
            var actions: [Action] = []
            for user in started.sorted(by: { $0.rawValue < $1.rawValue }) { actions += puppetChatState(.composing, of: user, in: room, now: now) }
            // Only a puppet that showed typing has something to stop. After its message (<active/>, see ``puppetSent``)
            // the user is active, not paused: that also cancels a composing still waiting.
            for user in stopped.sorted(by: { $0.rawValue < $1.rawValue }) {
                guard let last = chatStates.lastSent(user) else { continue }
                actions += puppetChatState(last == .active ? .active : .paused, of: user, in: room, now: now)
            }
            return actions + scheduleFlush()
        case .read(let reads):
            let wanted = reads.filter { room.isBridged($0.key) && room.joinedPuppet($0.key) != nil }
            return wanted.isEmpty ? [] : [.resolveReadMarkers(.matrix(wanted))]
        }
    }

    private mutating func puppetChatState(_ state: ChatState, of user: UserID, in room: some Room, now: ContinuousClock.Instant) -> [Action] {
        guard let occupant = room.joinedPuppet(user), let value = chatStates.offer(state, for: user, now: now) else { return [] }
        return [.send(.chatState(user: user, occupant: occupant, value))]
    }

    /// With a body, the message carried `<active/>`: that is the user's chat state now, for users whose typing was bridged.
    mutating func puppetSent(_ user: UserID, withBody: Bool, now: ContinuousClock.Instant) -> [Action] {
        if withBody, chatStates.lastSent(user) != nil { chatStates.record(.active, for: user, now: now) }
        return []
    }

    // MARK: Outcomes and timers

    /// What the message map says the markers name (nil: the store could not be read; the markers are dropped).
    mutating func readMarkersResolved(_ query: ReadMarkerQuery, _ found: [MessageMapping]?, in room: some Room,
                                      now: ContinuousClock.Instant) -> [Action] {
        guard let found else { return [] }
        var actions: [Action] = []
        switch query {
        case .xmpp(let ghost, let id):
            guard let event = found.first(where: { $0.kind == .message || $0.kind == .edit })?.eventID else {
                return [Self.unmappedMarker(["xmpp.marker.id": id])]
            }
            if let value = receipts.offer(event, for: ghost, now: now) { actions.append(.send(.readReceipt(ghost: ghost, value))) }
        case .matrix(let reads):
            for (user, event) in reads.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                guard let mapping = found.first(where: { $0.eventID == event }), mapping.kind == .message || mapping.kind == .edit,
                      let id = Self.markerID(of: mapping, stanzaIDs: room.stanzaIDs) else {
                    actions.append(Self.unmappedMarker(["matrix.event.id": event.rawValue]))
                    continue
                }
                if let occupant = room.joinedPuppet(user), let value = displayed.offer(id, for: user, now: now) {
                    actions.append(.send(.displayed(user: user, occupant: occupant, id: value)))
                }
            }
        }
        return actions + scheduleFlush()
    }

    /// The id a `<displayed/>` names a message by: the room's stanza-id (XEP-0333 §5.1: MUST when the room assigns
    /// them); in a room without stanza-ids, the message's `id` attribute. nil while one of ours waits for its reflection.
    private static func markerID(of mapping: MessageMapping, stanzaIDs: Bool?) -> String? {
        if let stanzaID = mapping.stanzaID { return stanzaID.rawValue }
        return stanzaIDs == false ? mapping.xmppID?.rawValue : nil
    }

    private static func unmappedMarker(_ metadata: Logger.Metadata) -> Action {
        .log(LogEntry(level: .debug, message: "A read marker names a message that was not bridged; dropped", metadata: metadata))
    }

    /// The flush timer fired: what waited in the throttles goes out (to puppets and ghosts still there).
    mutating func flush(in room: some Room, now: ContinuousClock.Instant) -> [Action] {
        flushAt = nil
        var actions: [Action] = []
        for (ghost, typing) in typing.takeDue(now: now) where room.isGhostJoined(ghost) {
            actions.append(.send(.typing(ghost: ghost, typing)))
        }
        for (ghost, event) in receipts.takeDue(now: now) where room.isGhostJoined(ghost) {
            actions.append(.send(.readReceipt(ghost: ghost, event)))
        }
        for (user, state) in chatStates.takeDue(now: now) {
            if let occupant = room.joinedPuppet(user) { actions.append(.send(.chatState(user: user, occupant: occupant, state))) }
        }
        for (user, id) in displayed.takeDue(now: now) {
            if let occupant = room.joinedPuppet(user) { actions.append(.send(.displayed(user: user, occupant: occupant, id: id))) }
        }
        return actions + scheduleFlush()
    }
}
