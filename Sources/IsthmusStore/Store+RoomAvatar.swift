import IsthmusCommon

/// The MUC avatar a link last applied to its Matrix room (`room_state.avatar_sha1`, `room_state.avatar_mxc`,
/// migration 12): what tells a new hash from the one already set, and whether the Matrix room's avatar is ours to clear.
public struct RoomAvatarRecord: Sendable, Equatable {
    /// The SHA-1 (lower-case hex) of the MUC's avatar image.
    public var sha1: String
    /// The `mxc://` the bot set as `m.room.avatar` for it.
    public var mxc: MXCURI

    public init(sha1: String, mxc: MXCURI) {
        self.sha1 = sha1
        self.mxc = mxc
    }
}

enum RoomAvatarColumns {
    /// Migration 12.
    static let schema = """
        ALTER TABLE room_state ADD COLUMN avatar_sha1 TEXT;
        ALTER TABLE room_state ADD COLUMN avatar_mxc TEXT;
        """
}

extension Store {
    /// The MUC avatar the bridge last set on `room`; nil when it set none (or cleared its own).
    public func roomAvatar(_ room: RoomID) throws -> RoomAvatarRecord? {
        try read { db in
            try db.query("SELECT avatar_sha1, avatar_mxc FROM room_state WHERE matrix_room = ?", room) { row -> RoomAvatarRecord? in
                guard let sha1 = row.string(0), let mxc = row.string(1).flatMap(MXCURI.init(mxc:)) else { return nil }
                return RoomAvatarRecord(sha1: sha1, mxc: mxc)
            }.first ?? nil
        }
    }

    /// Records the MUC avatar now set on `room` by the bridge (nil: the bridge's avatar was cleared).
    public func setRoomAvatar(_ room: RoomID, _ record: RoomAvatarRecord?) async throws {
        try await groupedWrite { db in
            _ = try db.run("""
                INSERT INTO room_state (matrix_room, avatar_sha1, avatar_mxc) VALUES (?, ?, ?)
                ON CONFLICT (matrix_room) DO UPDATE SET avatar_sha1 = excluded.avatar_sha1, avatar_mxc = excluded.avatar_mxc,
                    updated_at = excluded.updated_at
                """, room, record?.sha1, record?.mxc)
        }
    }
}
