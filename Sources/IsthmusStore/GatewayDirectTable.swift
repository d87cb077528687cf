import IsthmusCommon

/// `gateway_directs`: the Matrix rooms in which an XMPP user's ghost and a Matrix member talk privately, opened by a
/// private message inside a hosted room (XEP-0045 §7.5) and kept for the next ones.
enum GatewayDirectTable {
    static let schema = """
        CREATE TABLE gateway_directs (
            ghost        TEXT NOT NULL,
            matrix_user  TEXT NOT NULL,
            matrix_room  TEXT NOT NULL UNIQUE,
            room         TEXT NOT NULL,
            PRIMARY KEY (ghost, matrix_user)
        );
        """
}

extension Store {
    /// Every private room of the hosted rooms: (ghost, Matrix user, its Matrix room, the hosted room it began in);
    /// `ghost`: only that ghost's.
    public func gatewayDirects(of ghost: UserID? = nil) throws -> [(ghost: UserID, user: UserID, matrixRoom: RoomID, room: JID)] {
        let select = "SELECT ghost, matrix_user, matrix_room, room FROM gateway_directs"
        func decode(_ row: Database.Row) -> (ghost: UserID, user: UserID, matrixRoom: RoomID, room: JID)? {
            guard let ghost: UserID = row.id(0), let user: UserID = row.id(1), let matrixRoom: RoomID = row.id(2), let room: JID = row.id(3) else {
                return nil
            }
            return (ghost, user, matrixRoom, room)
        }
        return try read { db in
            if let ghost {
                return try db.query(select + " WHERE ghost = ? ORDER BY matrix_room", ghost, map: decode).compactMap { $0 }
            }
            return try db.query(select + " ORDER BY matrix_room", map: decode).compactMap { $0 }
        }
    }

    /// Records the private room of `ghost` and `user` (the hosted room's JID it was opened from).
    public func recordGatewayDirect(ghost: UserID, user: UserID, matrixRoom: RoomID, room: JID) throws {
        try write { db in
            try db.run("INSERT INTO gateway_directs (ghost, matrix_user, matrix_room, room) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       ghost, user, matrixRoom, room.bare.description)
        }
    }
}
