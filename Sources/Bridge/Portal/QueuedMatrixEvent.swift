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

extension QueuedMatrixEvent {
    /// Inbox rows decoded, in their order, and the rows that do not decode (whoever read them drops them: they
    /// would block their room for ever). Pure.
    static func decoding(_ entries: [InboxEntry]) -> (queued: [QueuedMatrixEvent], undecodable: [InboxEntry]) {
        let decoder = JSONDecoder()
        var queued: [QueuedMatrixEvent] = []
        var undecodable: [InboxEntry] = []
        queued.reserveCapacity(entries.count)
        for entry in entries {
            if let event = try? decoder.decode(MatrixRoomEvent.self, from: Data(entry.payload)) {
                queued.append(QueuedMatrixEvent(seq: entry.seq, event: event))
            } else {
                undecodable.append(entry)
            }
        }
        return (queued, undecodable)
    }
}

extension BridgeContext {
    /// Deletes inbox rows that do not decode, each logged with its event id; a failed delete is logged too (the row
    /// is read, and dropped, again next time). Runs on the caller's actor; does store I/O.
    func drop(undecodable entries: [InboxEntry], logger: Logger,
              isolation: isolated (any Actor)? = #isolation) async {
        for entry in entries {
            logger.error("Dropping an undecodable inbox entry", metadata: ["matrix.event.id": entry.eventID.rawValue,
                                                                             "matrix.room.id": entry.room.rawValue])
            do {
                try await durably { try await store.deleteInbox(seq: entry.seq) }
            } catch {
                logger.error("Could not drop an undecodable inbox entry", metadata: ["matrix.event.id": entry.eventID.rawValue,
                                                                                      "error": "\(error)"])
            }
        }
    }
}
