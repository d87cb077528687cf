import IsthmusCommon
import IsthmusStore

/// What deciding on the events just queued in one DM room needs (``DirectChatMachine/arrived(_:in:_:)``), read from
/// the store in one call.
struct DirectArrivalSnapshot: Sendable, Equatable {
    /// Older events of the room still wait in the inbox (its linked room was not active, or one failed).
    var olderQueued = false
    /// The linked room of the DM whose room it is, read only when older events wait; nil: no DM has the room, or
    /// nothing older waits.
    var linkedRoom: RoomID? = nil
    /// Whether `linkedRoom` is still linked.
    var linkedRoomIsLinked = false
}

extension Store {
    /// The snapshot for the events queued in DM room `room` from inbox row `seq` on. Runs on the store's thread, one
    /// read after another; writes nothing.
    func directArrivalSnapshot(_ room: RoomID, from seq: Int64) throws -> DirectArrivalSnapshot {
        guard try hasInbox(room, before: seq) else { return DirectArrivalSnapshot() }
        guard let chat = try directChat(in: room) else { return DirectArrivalSnapshot(olderQueued: true) }
        return DirectArrivalSnapshot(olderQueued: true, linkedRoom: chat.linkedRoom,
                                     linkedRoomIsLinked: try !linkedRooms(among: [chat.linkedRoom]).isEmpty)
    }
}
