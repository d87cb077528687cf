import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// A Matrix event as it sits in a room's durable inbox: its place (the inbox row's sequence number) and the event.
/// Handed to the portal straight from the transaction that wrote it, or read back from the store after a restart.
struct QueuedMatrixEvent: Sendable, Equatable {
    /// The inbox row; deleted (or consumed by the message map) once the event is handled.
    var seq: Int64
    var event: MatrixRoomEvent
}

/// An inbox row that does not decode (written by a version that knew more, or damaged). Whoever reads it decides to
/// drop it — it would block its room for ever — and says so in an error line.
struct UndecodableInboxRow: Sendable, Equatable {
    var seq: Int64
    var eventID: EventID
    var room: RoomID

    /// The error line that says it is dropped.
    var dropped: PortalStateMachine.LogEntry {
        .init(level: .error, message: "Dropping an undecodable inbox entry",
              metadata: ["matrix.event.id": eventID.rawValue, "matrix.room.id": room.rawValue, "matrix.inbox.seq": "\(seq)"])
    }
}

extension QueuedMatrixEvent {
    /// Inbox rows decoded, in their order, and the rows that do not decode. Pure.
    static func decoding(_ entries: [InboxEntry]) -> (queued: [QueuedMatrixEvent], undecodable: [UndecodableInboxRow]) {
        let decoder = JSONDecoder()
        var queued: [QueuedMatrixEvent] = []
        var undecodable: [UndecodableInboxRow] = []
        queued.reserveCapacity(entries.count)
        for entry in entries {
            if let event = try? decoder.decode(MatrixRoomEvent.self, from: Data(entry.payload)) {
                queued.append(QueuedMatrixEvent(seq: entry.seq, event: event))
            } else {
                undecodable.append(UndecodableInboxRow(seq: entry.seq, eventID: entry.eventID, room: entry.room))
            }
        }
        return (queued, undecodable)
    }
}
