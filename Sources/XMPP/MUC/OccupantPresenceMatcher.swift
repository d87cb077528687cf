import IsthmusCommon

/// Decides whether an incoming presence answers one of our occupant's requests in a room (join, nick change, leave).
///
/// A component hosts many occupants, and every presence in a room reaches every one of them; only presences *to*
/// this occupant's real JID *from* the room can answer it. Of those, the answer is (XEP-0045 §7.2.3, §7.6, §7.14):
/// an error from the requested occupant JID (or the room), or a self-presence — status 110, or from the requested
/// occupant JID. Everything else is not an answer and goes on to the bridge. Pure value type.
public struct OccupantPresenceMatcher: Sendable, Hashable {
    /// What a matching presence means.
    public enum Match: Sendable, Hashable {
        /// An available self-presence: joined, or nick changed.
        case available(SelfPresence)
        /// An unavailable self-presence that is not a nick change: left, kicked, banned, room shut down.
        case unavailable(SelfPresence)
        /// A presence error.
        case error(StanzaError)
    }

    /// The room's bare JID.
    public let room: JID
    /// The occupant JID asked for, `room@service/nick`.
    public let requestedOccupant: JID
    /// Our occupant's real JID (under the component domain).
    public let occupant: JID

    /// A matcher for `occupant` asking to be `nick` in `room`; nil when `nick` is not a valid resource.
    public init?(room: JID, nick: String, occupant: JID) {
        guard let requested = room.bare.with(resource: nick) else { return nil }
        self.room = room.bare
        self.requestedOccupant = requested
        self.occupant = occupant
    }

    /// Whether a presence to our occupant from `from` may answer this request (``match(_:)``'s rule on the addresses
    /// and the self-presence status alone): an error from the requested occupant JID or the room, or a presence from
    /// the requested occupant JID or with status 110. What else `match` checks (the type, a nick change) only narrows it.
    public func mayAnswer(from: JID, isError: Bool, isSelfPresence: Bool) -> Bool {
        guard from.bare == room else { return false }
        if isError { return from == requestedOccupant || from.isBare }
        return !from.isBare && (from == requestedOccupant || isSelfPresence)
    }

    /// The meaning of `presence` for this request, or nil when it is not an answer to it.
    public func match(_ presence: Presence) -> Match? {
        guard presence.to == occupant, let from = presence.from,
              mayAnswer(from: from, isError: presence.type == .error,
                        isSelfPresence: presence.statusCodes.contains(.selfPresence)) else { return nil }
        switch presence.type {
        case .error:
            return .error(presence.error ?? StanzaError(type: .cancel, condition: .undefinedCondition))
        case .available:
            return .available(SelfPresence(presence: presence, occupantJID: from))
        case .unavailable:
            // The unavailable presence of a nick change (303) is a step, not an answer.
            guard !presence.statusCodes.contains(.nickChanged) else { return nil }
            return .unavailable(SelfPresence(presence: presence, occupantJID: from))
        default:
            return nil
        }
    }
}
