import IsthmusCommon
import IsthmusStore

/// What the decision for one DM event needs (``DirectChatMachine``), read from the store in one call.
struct DirectEventSnapshot: Sendable, Equatable {
    /// The DM whose room the event is in; nil: no DM has that room (any more).
    var chat: DirectChat?
    /// The ghost's state in the linked room (its nick, whether its occupant is in the MUC); nil: never seen there.
    var occupant: RoomGhost? = nil
    /// What the DM's message map holds about the messages the event refers to.
    var targets = PortalStateMachine.MatrixTargets()
    /// The Matrix user's occupant nick, for the quote of a reply to her own message (read only then).
    var userNick: String? = nil
    /// Whether the DM's linked room is still linked (an unlinked room's DM does not wait: nothing would carry it).
    var linkedRoomIsLinked = false
}

extension Store {
    /// The snapshot for the DM event in inbox row `item.seq`, or nil when it is no longer to be handled (another
    /// drain took it, or it is a replay of an event handled before: its row is then deleted, the one write here).
    /// Runs on the store's thread, one read after another.
    func directEventSnapshot(_ item: QueuedMatrixEvent) throws -> DirectEventSnapshot? {
        let event = item.event
        guard try isDirectEventPending(seq: item.seq, eventID: event.eventID) else { return nil }
        guard let chat = try directChat(in: event.room) else { return DirectEventSnapshot() }
        let targets = try matrixTargets(of: event, in: event.room)
        let userNick = targets.reply?.direction == .matrixToXMPP
            ? try puppets(chat.linkedRoom).first { $0.user == chat.matrixUser }?.nick : nil
        return DirectEventSnapshot(chat: chat, occupant: try roomGhost(chat.ghost, in: chat.linkedRoom), targets: targets,
                                   userNick: userNick, linkedRoomIsLinked: try !linkedRooms(among: [chat.linkedRoom]).isEmpty)
    }
}
