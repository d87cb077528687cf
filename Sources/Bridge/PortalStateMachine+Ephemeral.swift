import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// Typing and read markers, both ways (RICH.md §7), best effort: nothing is stored or retried, and every send goes
/// out through the portal's ``EphemeralSender`` without holding up messages.
///
/// - XEP-0085 chat states of an occupant → its ghost's `m.typing` (`composing` on for 30 s, refreshed at most every
///   10 s; `paused`/`active`/`inactive`/`gone` or a message with a body → off).
/// - Matrix `m.typing` (the full list: diffed) → `<composing/>` / `<paused/>` from the user's puppet, at most one change
///   per user per 3 s (latest wins), only for puppets in the MUC.
/// - XEP-0333 `<displayed id='STANZA-ID'/>` of an occupant → its ghost's `m.read` receipt on the mapped event.
/// - Matrix `m.read` → `<displayed id/>` from the puppet naming the mapped stanza-id, at most one per user per 10 s,
///   latest wins: Prosody archives every marker (history.lib.lua treats chat-markers as historic).
/// Receipts and markers on messages that were not bridged are dropped (debug log). Bridge-owned users are ignored on
/// both sides, so nothing echoes.
extension PortalStateMachine {
    /// The machine's memory of typing and markers (per room, in memory only).
    struct Ephemeral: Sendable {
        /// Matrix users typing as of the last `m.typing` (bridge-owned users left out).
        var matrixTyping: Set<UserID> = []
        /// Chat states sent from puppets, by Matrix user.
        var chatStates = LatestWinsThrottle<UserID, ChatState>(interval: .seconds(3))
        /// `<displayed/>` ids sent from puppets, by Matrix user.
        var displayed = LatestWinsThrottle<UserID, String>(interval: .seconds(10))
        /// Ghosts' typing notices, by ghost: a flip at most every 2 s; "still typing" again after 10 s.
        var typing = LatestWinsThrottle<UserID, Bool>(interval: .seconds(2), repeatAfter: .seconds(10))
        /// Ghosts' read receipts, by ghost (a flood of markers from one occupant becomes one receipt per 2 s).
        var receipts = LatestWinsThrottle<UserID, EventID>(interval: .seconds(2))
        /// The flush the portal has been asked for, if any.
        var flushAt: ContinuousClock.Instant?

        /// When the earliest waiting send is due.
        var nextDeadline: ContinuousClock.Instant? {
            [chatStates.nextDeadline, displayed.nextDeadline, typing.nextDeadline, receipts.nextDeadline].compactMap { $0 }.min()
        }
    }

    /// How long a ghost's typing notice lasts on the homeserver unless refreshed or cleared.
    static let typingTimeout: Duration = .seconds(30)

    /// What a read marker names, to be resolved against the message map.
    enum ReadMarkerQuery: Sendable, Equatable {
        /// Matrix users read up to these events: which stanzas are they?
        case matrix([UserID: EventID])
        /// An occupant (its ghost) displayed the message with this id: which event is it?
        case xmpp(ghost: UserID, id: String)
    }

    // MARK: XMPP → Matrix

    /// The typing part of a live MUC message from an occupant (not ours): a chat state, or a body, which ends typing.
    mutating func occupantTyping(_ message: RoomMessage) -> [Action] {
        guard !message.fromArchive, message.delay == nil else { return [] }
        let typing: Bool
        switch message.signals.chatState {
        case .composing? where message.body == nil: typing = true
        case nil where message.body == nil: return []
        default: typing = false
        }
        // Cheap checks first: this runs for every message. Off only for a ghost shown typing.
        guard let ghost = occupants[message.nick]?.ghost, typing || ephemeral.typing.lastSent(ghost) != nil,
              joinedGhost(nick: message.nick, realJID: message.realJID) == ghost else { return [] }
        guard let value = ephemeral.typing.offer(typing, for: ghost, now: now) else { return scheduleEphemeralFlush() }
        return [.sendEphemeral(.typing(ghost: ghost, value))] + scheduleEphemeralFlush()
    }

    /// A `<displayed/>` marker in a live signal-only message from an occupant whose ghost is in the Matrix room: the
    /// message map says which event it names. nil when the message is not such a marker.
    mutating func occupantDisplayed(_ message: RoomMessage) -> [Action]? {
        guard let id = message.signals.displayed, message.isSignalOnly, !message.fromArchive, message.delay == nil, let ghost = joinedGhost(nick: message.nick, realJID: message.realJID) else { return nil }
        return [.resolveReadMarkers(.xmpp(ghost: ghost, id: id))]
    }

    /// The ghost standing for the occupant `nick`, when it is joined to the Matrix room (not for our own occupants).
    private func joinedGhost(nick: String, realJID: JID?) -> UserID? {
        guard !nick.isEmpty, !isOurOccupant(nick: nick, realJID: realJID), let ghost = occupants[nick]?.ghost,
              ghosts[ghost]?.joined == true else { return nil }
        return ghost
    }

    // MARK: Matrix → XMPP

    /// Matrix typing or receipts of this room.
    mutating func matrixEphemeral(_ event: MatrixEphemeral) -> [Action] {
        switch event {
        case .typing(let users):
            let typing = users.filter(isBridgedMatrixUser)
            let started = typing.subtracting(ephemeral.matrixTyping), stopped = ephemeral.matrixTyping.subtracting(typing)
            ephemeral.matrixTyping = typing
            var actions: [Action] = []
            for user in started.sorted(by: { $0.rawValue < $1.rawValue }) { actions += puppetChatState(.composing, of: user) }
            // Only a puppet that showed typing has something to stop. After its message (<active/>, see ``puppetSpoke``)
            // the user is active, not paused: that also cancels a composing still waiting.
            for user in stopped.sorted(by: { $0.rawValue < $1.rawValue }) {
                guard let last = ephemeral.chatStates.lastSent(user) else { continue }
                actions += puppetChatState(last == .active ? .active : .paused, of: user)
            }
            return actions + scheduleEphemeralFlush()
        case .read(let reads):
            let wanted = reads.filter { isBridgedMatrixUser($0.key) && joinedPuppet($0.key) != nil }
            return wanted.isEmpty ? [] : [.resolveReadMarkers(.matrix(wanted))]
        }
    }

    private mutating func puppetChatState(_ state: ChatState, of user: UserID) -> [Action] {
        guard let occupant = joinedPuppet(user), let value = ephemeral.chatStates.offer(state, for: user, now: now) else { return [] }
        return [.sendEphemeral(.chatState(user: user, occupant: occupant, value))]
    }

    /// The occupant JID of `user`'s puppet when it is in the MUC and the bridge can send.
    private func joinedPuppet(_ user: UserID) -> JID? {
        guard xmppConnected, botJoined, let puppet = puppets[user], puppet.joined else { return nil }
        return puppet.occupant
    }

    /// A puppet's message went out; with a body it carried `<active/>` (``ComponentXMPPLink``): that is the user's
    /// chat state now, for users whose typing was bridged.
    mutating func puppetSpoke(_ delivery: XMPPDelivery) -> [Action] {
        if delivery.stanza.body != nil, ephemeral.chatStates.lastSent(delivery.user) != nil {
            ephemeral.chatStates.record(.active, for: delivery.user, now: now)
        }
        return []
    }

    // MARK: Outcomes and timers

    /// What the message map says the markers name (nil: the store could not be read; the markers are dropped).
    mutating func readMarkersResolved(_ query: ReadMarkerQuery, _ found: [MessageMapping]?) -> [Action] {
        guard let found else { return [] }
        var actions: [Action] = []
        switch query {
        case .xmpp(let ghost, let id):
            guard let event = found.first(where: { $0.kind == .message || $0.kind == .edit })?.eventID else {
                return [Self.unmappedMarker(["xmpp.marker.id": id])]
            }
            if let value = ephemeral.receipts.offer(event, for: ghost, now: now) {
                actions.append(.sendEphemeral(.readReceipt(ghost: ghost, value)))
            }
        case .matrix(let reads):
            for (user, event) in reads.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                guard let mapping = found.first(where: { $0.eventID == event }), mapping.kind == .message || mapping.kind == .edit,
                      let id = markerID(of: mapping) else {
                    actions.append(Self.unmappedMarker(["matrix.event.id": event.rawValue]))
                    continue
                }
                if let occupant = joinedPuppet(user), let value = ephemeral.displayed.offer(id, for: user, now: now) {
                    actions.append(.sendEphemeral(.displayed(user: user, occupant: occupant, id: value)))
                }
            }
        }
        return actions + scheduleEphemeralFlush()
    }

    /// The id a `<displayed/>` names a message by: the room's stanza-id (XEP-0333 §5.1: MUST when the room assigns
    /// them); in a room without stanza-ids, the message's `id` attribute. nil while one of ours waits for its reflection.
    private func markerID(of mapping: MessageMapping) -> String? {
        if let stanzaID = mapping.stanzaID { return stanzaID.rawValue }
        return roomFeatures?.stanzaIDs == false ? mapping.xmppID?.rawValue : nil
    }

    private static func unmappedMarker(_ metadata: Logger.Metadata) -> Action {
        .log(LogEntry(level: .debug, message: "A read marker names a message that was not bridged; dropped", metadata: metadata))
    }

    /// The portal's flush timer fired: what waited in the throttles goes out (to puppets and ghosts still there).
    mutating func flushEphemeral() -> [Action] {
        ephemeral.flushAt = nil
        var actions: [Action] = []
        for (ghost, typing) in ephemeral.typing.takeDue(now: now) where ghosts[ghost]?.joined == true {
            actions.append(.sendEphemeral(.typing(ghost: ghost, typing)))
        }
        for (ghost, event) in ephemeral.receipts.takeDue(now: now) where ghosts[ghost]?.joined == true {
            actions.append(.sendEphemeral(.readReceipt(ghost: ghost, event)))
        }
        for (user, state) in ephemeral.chatStates.takeDue(now: now) {
            if let occupant = joinedPuppet(user) { actions.append(.sendEphemeral(.chatState(user: user, occupant: occupant, state))) }
        }
        for (user, id) in ephemeral.displayed.takeDue(now: now) {
            if let occupant = joinedPuppet(user) { actions.append(.sendEphemeral(.displayed(user: user, occupant: occupant, id: id))) }
        }
        return actions + scheduleEphemeralFlush()
    }

    /// Asks the portal for a flush when something waits that is due before the flush already asked for.
    private mutating func scheduleEphemeralFlush() -> [Action] {
        guard let next = ephemeral.nextDeadline, ephemeral.flushAt.map({ next < $0 }) ?? true else { return [] }
        ephemeral.flushAt = next
        return [.scheduleEphemeralFlush(at: next)]
    }
}

extension RoomMessage {
    /// Whether it carries only a chat state or marker: no body, nothing it refers to.
    var isSignalOnly: Bool { body == nil && !signals.isEmpty && !references.refersToAnother }
}
