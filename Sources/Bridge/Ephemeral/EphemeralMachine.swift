import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// Typing and read markers of one room, both ways (RICH.md §7), best effort: nothing is stored or retried, and every
/// send goes out through the portal's ``EphemeralSender`` without holding up messages. A sub-machine of
/// ``PortalStateMachine``: it owns its state, reads the room only through the ``Room`` view it is handed with each
/// input, and its actions reach the ``Portal`` wrapped in ``PortalStateMachine/Action/ephemeral(_:)``.
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
struct EphemeralMachine: Sendable {
    /// What happened, as far as typing and markers go.
    enum Input: Sendable, Equatable {
        /// A live MUC message addressed to the bridge's occupant: its chat state, or its body (which ends typing).
        case occupantTyping(RoomMessage)
        /// A signal-only MUC message: its `<displayed/>` marker, if it carries one.
        case occupantDisplayed(RoomMessage)
        /// Matrix typing or receipts of this room.
        case matrix(MatrixEphemeral)
        /// A puppet's groupchat message went out; with a body it carried `<active/>` (``SessionXMPPLink``).
        case puppetSent(UserID, withBody: Bool)
        /// The outcome of ``Action/resolveReadMarkers(_:)``: the mapped messages the markers name; nil when the store
        /// could not be read.
        case readMarkersResolved(ReadMarkerQuery, [MessageMapping]?)
        /// The flush timer fired.
        case flush
    }

    /// What the portal must do, in order.
    enum Action: Sendable, Equatable {
        /// A typing notice, chat state or read marker, handed to the portal's ``EphemeralSender`` (never awaited).
        case send(EphemeralSend)
        /// Feed ``Input/flush`` at this time (on the portal's ``PortalTimer/ephemeralFlush``, replacing a flush asked for before).
        case scheduleFlush(at: ContinuousClock.Instant)
        /// → ``Input/readMarkersResolved(_:_:)``: the mapped messages a read marker names.
        case resolveReadMarkers(ReadMarkerQuery)
        case log(LogEntry)

        /// Whether the machine waits for this action's outcome.
        var awaitsOutcome: Bool {
            if case .resolveReadMarkers = self { true } else { false }
        }
    }

    /// What a read marker names, to be resolved against the message map.
    enum ReadMarkerQuery: Sendable, Equatable {
        /// Matrix users read up to these events: which stanzas are they?
        case matrix([UserID: EventID])
        /// An occupant (its ghost) displayed the message with this id: which event is it?
        case xmpp(ghost: UserID, id: String)
    }

    /// What the machine may read of the room's model (kept by the portal machine), handed in with each input. A
    /// protocol, so the portal's view is plain values read in place (no closures to allocate for every message).
    protocol Room {
        /// The ghost standing for the occupant with this nick, if any: one lookup, cheap enough for every message.
        func ghostOfOccupant(_ nick: String) -> UserID?
        /// The ghost standing for the occupant when it is joined to the Matrix room; nil for our own occupants.
        func joinedGhost(_ nick: String, _ realJID: JID?) -> UserID?
        /// Whether this ghost is joined to the Matrix room.
        func isGhostJoined(_ ghost: UserID) -> Bool
        /// The occupant JID of the user's puppet when it is in the MUC and the bridge can send there.
        func joinedPuppet(_ user: UserID) -> JID?
        /// Whether the user is a Matrix user the bridge mirrors (not the bot, not a ghost).
        func isBridged(_ user: UserID) -> Bool
        /// Whether the room assigns stanza-ids (nil: not known yet, trusted as if it did).
        var stanzaIDs: Bool? { get }
    }

    /// A line for the portal's logger (the portal machine's payload type).
    typealias LogEntry = PortalStateMachine.LogEntry

    /// How long a ghost's typing notice lasts on the homeserver unless refreshed or cleared.
    static let typingTimeout: Duration = .seconds(30)

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
    /// The flush asked for, if any.
    var flushAt: ContinuousClock.Instant?

    /// When the earliest waiting send is due.
    var nextDeadline: ContinuousClock.Instant? {
        [chatStates.nextDeadline, displayed.nextDeadline, typing.nextDeadline, receipts.nextDeadline].compactMap { $0 }.min()
    }

    /// Takes one input; returns what to do, in order (only ``Action/resolveReadMarkers(_:)`` awaits an outcome, and
    /// it comes alone).
    mutating func receive(_ input: Input, in room: some Room, now: ContinuousClock.Instant) -> [Action] {
        switch input {
        case .occupantTyping(let message): occupantTyping(message, in: room, now: now)
        case .occupantDisplayed(let message): occupantDisplayed(message, in: room)
        case .matrix(let event): matrix(event, in: room, now: now)
        case .puppetSent(let user, let withBody): puppetSent(user, withBody: withBody, now: now)
        case .readMarkersResolved(let query, let found): readMarkersResolved(query, found, in: room, now: now)
        case .flush: flush(in: room, now: now)
        }
    }

    /// Asks for a flush when something waits that is due before the flush already asked for.
    mutating func scheduleFlush() -> [Action] {
        guard let next = nextDeadline, flushAt.map({ next < $0 }) ?? true else { return [] }
        flushAt = next
        return [.scheduleFlush(at: next)]
    }
}

extension RoomMessage {
    /// Whether it carries only a chat state or marker: no body, nothing it refers to.
    var isSignalOnly: Bool { body == nil && !signals.isEmpty && !references.refersToAnother }
}
