import IsthmusCommon

/// The subject/topic and name a link last bridged (`room_state.subject`, `room_state.room_name`, migration 10).
public struct RoomTexts: Sendable, Equatable {
    /// The text both sides were last brought to agree on as the MUC subject and the Matrix topic; nil: none yet.
    public var subject: String?
    /// The MUC name last copied to the Matrix room (links with `--sync-name`); nil: none yet.
    public var name: String?

    public init(subject: String? = nil, name: String? = nil) {
        self.subject = subject
        self.name = name
    }
}

extension Store {
    /// What `room`'s link last bridged as subject and name.
    public func roomTexts(_ room: RoomID) throws -> RoomTexts {
        try read { db in
            try db.query("SELECT subject, room_name FROM room_state WHERE matrix_room = ?", room) {
                RoomTexts(subject: $0.string(0), name: $0.string(1))
            }.first ?? RoomTexts()
        }
    }

    /// Records the subject/topic both sides now agree on.
    public func setKnownSubject(_ room: RoomID, _ subject: String) async throws {
        try await groupedWrite { db in
            _ = try db.run("""
                INSERT INTO room_state (matrix_room, subject) VALUES (?, ?)
                ON CONFLICT (matrix_room) DO UPDATE SET subject = excluded.subject, updated_at = excluded.updated_at
                """, room, subject)
        }
    }

    /// Records the MUC name copied to the Matrix room.
    public func setKnownRoomName(_ room: RoomID, _ name: String) async throws {
        try await groupedWrite { db in
            _ = try db.run("""
                INSERT INTO room_state (matrix_room, room_name) VALUES (?, ?)
                ON CONFLICT (matrix_room) DO UPDATE SET room_name = excluded.room_name, updated_at = excluded.updated_at
                """, room, name)
        }
    }
}
