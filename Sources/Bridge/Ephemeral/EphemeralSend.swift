import IsthmusCommon

/// Typing and read receipts from Matrix for one room, as the appservice handler hands them to the portal (not stored:
/// best effort). Bridge-owned users (the bot, ghosts) are already left out.
public enum MatrixEphemeral: Sendable, Equatable {
    /// Everyone typing in the room now (`m.typing` carries the full list, spec §11.5).
    case typing(Set<UserID>)
    /// Users' newest public read receipts (`m.read`, unthreaded or on the main thread; spec §11.6).
    case read([UserID: EventID])
}

/// One best-effort send of a typing notice, chat state or read marker. The ``Portal`` hands these to its
/// ``EphemeralSender`` and does not wait: they never hold up messages, and only the latest per ``target`` is kept
/// while one is on its way.
enum EphemeralSend: Sendable, Equatable {
    /// A ghost's typing notice on (for 30 s) or off (`PUT /rooms/{id}/typing/{ghost}`).
    case typing(ghost: UserID, Bool)
    /// A ghost's `m.read` receipt on an event.
    case readReceipt(ghost: UserID, EventID)
    /// A XEP-0085 chat state from a Matrix user's puppet.
    case chatState(user: UserID, occupant: JID, ChatState)
    /// A XEP-0333 `<displayed id/>` from a Matrix user's puppet.
    case displayed(user: UserID, occupant: JID, id: String)

    /// What a later send replaces: one per kind and user.
    enum Target: Hashable, Sendable {
        case typing(UserID)
        case readReceipt(UserID)
        case chatState(UserID)
        case displayed(UserID)
    }

    var target: Target {
        switch self {
        case .typing(let ghost, _): .typing(ghost)
        case .readReceipt(let ghost, _): .readReceipt(ghost)
        case .chatState(let user, _, _): .chatState(user)
        case .displayed(let user, _, _): .displayed(user)
        }
    }
}

/// Sends waiting to go out, the latest per target, oldest target first. Pure value (see ``EphemeralSender``).
struct EphemeralOutbox: Sendable {
    private var order: [EphemeralSend.Target] = []
    private var latest: [EphemeralSend.Target: EphemeralSend] = [:]

    /// Queues `send`, replacing a waiting one to the same target (it keeps that one's place).
    mutating func put(_ send: EphemeralSend) {
        if latest[send.target] == nil { order.append(send.target) }
        latest[send.target] = send
    }

    /// The next send, oldest target first; nil when none waits.
    mutating func take() -> EphemeralSend? {
        guard !order.isEmpty else { return nil }
        return latest.removeValue(forKey: order.removeFirst())
    }

    var isEmpty: Bool { order.isEmpty }
}
