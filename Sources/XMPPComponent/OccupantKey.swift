import IsthmusCommon

/// One of our occupants in one room: the key of a pending join, nick change or leave (one at a time per pair).
struct OccupantKey: Hashable, Sendable {
    /// Our occupant's real JID (under the component domain).
    var occupant: JID
    /// The room's bare JID.
    var room: JID
}

/// Archived messages arriving for one running MAM query.
struct MAMCollector {
    /// The archive queried (the room's bare JID): results must come from it.
    var archive: JID
    /// Who asked: results must be addressed to it.
    var querier: JID
    var messages: [ArchivedMessage] = []
}
