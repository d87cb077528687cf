import IsthmusCommon

/// One of our occupants in one room: the key of a pending join, nick change or leave (one at a time per pair).
package struct OccupantKey: Hashable, Sendable {
    /// Our occupant's real JID (under the component domain, or the client's account).
    package var occupant: JID
    /// The room's bare JID.
    package var room: JID

    package init(occupant: JID, room: JID) {
        self.occupant = occupant
        self.room = room
    }
}
