import IsthmusCommon

/// `matrix_inbox`: Matrix events accepted from homeserver transactions but not yet handled by their portal.
///
/// A transaction is acknowledged once its events are here, so nothing is lost if the bridge stops before
/// handling them; portals drain their room's rows in order and delete each when handled.
enum MatrixInboxTable {
    static let schema = """
        CREATE TABLE matrix_inbox (
            seq           INTEGER PRIMARY KEY AUTOINCREMENT,
            matrix_room   TEXT NOT NULL,
            event_id      TEXT NOT NULL UNIQUE,
            payload       BLOB NOT NULL
        );
        CREATE INDEX matrix_inbox_room ON matrix_inbox (matrix_room, seq);
        """

    /// Inserts `events` inside the caller's transaction, skipping event ids already queued; returns those added.
    static func insert(_ events: [(room: RoomID, eventID: EventID, payload: [UInt8])],
                       in db: SQLiteConnection) throws -> [InboxEntry] {
        var added: [InboxEntry] = []
        for event in events {
            if try db.run("INSERT OR IGNORE INTO matrix_inbox (matrix_room, event_id, payload) VALUES (?, ?, ?)",
                          event.room, event.eventID, SQLiteValue.blob(event.payload)) > 0 {
                added.append(InboxEntry(seq: db.lastInsertRowID, room: event.room, eventID: event.eventID, payload: event.payload))
            }
        }
        return added
    }
}

/// One queued event: its order and its encoded payload.
public struct InboxEntry: Sendable, Equatable {
    public var seq: Int64
    public var room: RoomID
    public var eventID: EventID
    public var payload: [UInt8]
}

extension Store {
    /// Queues events (already encoded) in one transaction; an event id seen before is ignored. Returns the entries
    /// actually added, in order. With `transaction`, the homeserver transaction is recorded as processed in the same
    /// commit: both are durable when this returns, or neither is, so no crash can leave queued (perhaps already
    /// handled) events of a transaction the homeserver will push again. Without: events the bridge fetched itself (the
    /// timeline check).
    public func enqueueInbox(_ events: [(room: RoomID, eventID: EventID, payload: [UInt8])],
                             markingProcessed transaction: TransactionID? = nil) throws -> [InboxEntry] {
        try write { db in
            let added = try MatrixInboxTable.insert(events, in: db)
            if let transaction { try AppServiceTransactionTable.markProcessed(transaction, in: db) }
            return added
        }
    }

    /// The queued events of `room`, oldest first.
    public func inbox(_ room: RoomID) throws -> [InboxEntry] {
        try read { db in
            try db.query("SELECT seq, event_id, payload FROM matrix_inbox WHERE matrix_room = ? ORDER BY seq", room) { row in
                InboxEntry(seq: Int64(row.int(0) ?? 0), room: room, eventID: row.id(1)!, payload: row.blob(2))
            }
        }
    }

    /// Removes a handled event.
    public func deleteInbox(seq: Int64) throws {
        try write { db in _ = try db.run("DELETE FROM matrix_inbox WHERE seq = ?", seq) }
    }

    /// Which of `events` of `room` the bridge has seen: queued here, or in the message map (bridged either way,
    /// being sent, or refused). One read transaction; each lookup uses an index.
    public func seenMatrixEvents(_ room: RoomID, among events: [EventID]) throws -> Set<EventID> {
        try read { db in
            var seen: Set<EventID> = []
            for event in events {
                let mapped = try !db.query("SELECT 1 FROM message_map WHERE matrix_room = ? AND event_id = ?", room, event,
                                           map: { _ in true }).isEmpty
                if try mapped || !db.query("SELECT 1 FROM matrix_inbox WHERE event_id = ?", event, map: { _ in true }).isEmpty {
                    seen.insert(event)
                }
            }
            return seen
        }
    }

    /// Drops every queued event of `room` (after unlink).
    public func deleteInbox(room: RoomID) throws {
        try write { db in _ = try db.run("DELETE FROM matrix_inbox WHERE matrix_room = ?", room) }
    }
}
