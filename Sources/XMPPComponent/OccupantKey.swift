import IsthmusCommon

/// One of our occupants in one room: the key of a pending join, nick change or leave (one at a time per pair).
struct OccupantKey: Hashable, Sendable {
    /// Our occupant's real JID (under the component domain).
    var occupant: JID
    /// The room's bare JID.
    var room: JID
}
