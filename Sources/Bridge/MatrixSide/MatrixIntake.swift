import IsthmusCommon
import IsthmusStore

/// The decisions of ``Bridge/acceptMatrixEvents(_:transaction:)``, apart from its store calls: which events of a
/// homeserver transaction are kept, who gets what was queued, and what a hole in the transaction ids asks for. Pure.
enum MatrixIntake {
    /// An event to queue: its room's inbox row.
    struct Row: Sendable, Equatable {
        var room: RoomID
        var eventID: EventID
        var payload: [UInt8]
    }

    /// The events of linked rooms, DM rooms and the rooms the gateway hosts for XMPP users, in order, as inbox rows;
    /// the others are not the bridge's business.
    static func rows(_ events: [MatrixRoomEvent], linked: Set<RoomID>, direct: Set<RoomID>, hosted: Set<RoomID> = []) throws -> [Row] {
        try events.filter { linked.contains($0.room) || direct.contains($0.room) || hosted.contains($0.room) }
            .map { Row(room: $0.room, eventID: $0.eventID, payload: try $0.inboxPayload()) }
    }

    /// Where the events just queued go, per room in order: a DM room's to ``DirectChats``, a linked room's to its portal,
    /// a hosted room's to ``GatewayRooms`` (which also gets a copy of a linked room's when it hosts it too).
    struct HandOff: Sendable, Equatable {
        var room: RoomID
        var direct: Bool
        var queued: [QueuedMatrixEvent]
        /// The gateway hosts the room for XMPP users.
        var hosted = false

        /// A portal's: a linked room's events.
        var toPortal: Bool { !direct && !hosted }
    }

    /// The hand-offs for `added` (the rows the store really added: a replayed event is not handed off again), in the
    /// order the rooms first appear.
    static func handOffs(_ added: [InboxEntry], events: [MatrixRoomEvent], direct: Set<RoomID>, hosted: Set<RoomID> = []) -> [HandOff] {
        let byID = Dictionary(events.map { ($0.eventID, $0) }, uniquingKeysWith: { first, _ in first })
        var result: [HandOff] = []
        var index: [RoomID: Int] = [:]
        for entry in added {
            guard let event = byID[entry.eventID] else { continue }
            let queued = QueuedMatrixEvent(seq: entry.seq, event: event)
            if let at = index[entry.room] {
                result[at].queued.append(queued)
            } else {
                index[entry.room] = result.count
                result.append(HandOff(room: entry.room, direct: direct.contains(entry.room), queued: [queued], hosted: hosted.contains(entry.room)))
            }
        }
        return result
    }

    /// What a hole in the homeserver's transaction ids asks of the rooms.
    enum GapAction: Sendable, Equatable {
        case none
        /// A new hole: every room checks its timeline before its next Matrix events (the stranded transaction may be
        /// any room's), even when this transaction brought nothing to keep.
        case checkEveryRoom
        /// A hole still open: the rooms that got events now check their timelines first.
        case checkRooms([RoomID])
    }

    static func gapAction(_ gap: TransactionGapDetector.Gap, handOffs: [HandOff]) -> GapAction {
        switch gap {
        case .none: .none
        case .new: .checkEveryRoom
        case .open: handOffs.contains(where: \.toPortal) ? .checkRooms(handOffs.filter(\.toPortal).map(\.room)) : .none
        }
    }
}
