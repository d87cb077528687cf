import IsthmusCommon

/// How a join request ended (XEP-0045 §7.2).
public enum JoinOutcome: Sendable, Hashable {
    /// In the room. `createdRoom` on the self-presence says whether the join created it (201); in that case the
    /// instant-room configuration has already been submitted and accepted.
    case joined(SelfPresence)
    /// The nick is taken by someone else (§7.2.9, `<conflict/>`).
    case nickConflict
    /// The room refused us: `registration-required` (members-only), `forbidden` (banned), `not-authorized`
    /// (password), `service-unavailable` (full), `not-acceptable`, `item-not-found` (locked room)…
    case notAllowed(StanzaError)
}

/// How a nick change ended (XEP-0045 §7.6).
public enum NickChangeOutcome: Sendable, Hashable {
    /// The room confirmed the new nick with a self-presence from it.
    case changed(SelfPresence)
    /// The new nick is taken (§7.6, `<conflict/>`).
    case nickConflict
    /// Refused for another reason (e.g. `not-acceptable`: nick locked down, or we are not in the room).
    case notAllowed(StanzaError)
}

/// How a leave request ended (XEP-0045 §7.14).
public enum LeaveOutcome: Sendable, Hashable {
    /// The room confirmed with our unavailable self-presence.
    case left(SelfPresence)
    /// No confirmation before the deadline (e.g. we were not in the room: rooms ignore such a presence).
    case unconfirmed
}
