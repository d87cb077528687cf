import IsthmusCommon

extension Store {
    /// Moves a link from `old` to `new` — the Matrix room was upgraded (`m.room.tombstone`) — in one commit: the link
    /// row, its resume state, puppets, the message map, reactions and DMs now belong to `new` (old event ids stay valid for
    /// lookups), its ghosts are recorded as not joined there yet (so they join it as their occupants are seen), and the
    /// old room's unhandled Matrix events are dropped (what a tombstoned room says after it is not bridged).
    /// Returns the moved link; nil when `old` is not linked (moved already). Throws ``RoomLinkConflict`` when `new` is
    /// linked already. (On PostgreSQL, a link to `new` another process inserts after the check makes the first UPDATE
    /// fail on the primary key instead: a ``StoreError`` of kind `constraint`, and nothing moved.)
    public func moveRoomLink(from old: RoomID, to new: RoomID) throws -> RoomLink? {
        try write { db -> RoomLink? in
            let rows = try db.query("SELECT \(RoomLinkTable.columns) FROM room_links WHERE matrix_room = ? OR matrix_room = ?",
                                    old, new, map: RoomLinkTable.decode).compactMap { $0 }
            guard var link = rows.first(where: { $0.matrixRoom == old }) else { return nil }
            if let other = rows.first(where: { $0.matrixRoom == new }) { throw RoomLinkConflict.matrixRoomAlreadyLinked(other) }
            try db.run("UPDATE room_links SET matrix_room = ?, matrix_alias = NULL WHERE matrix_room = ?", new, old)
            try db.run("UPDATE room_state SET matrix_room = ? WHERE matrix_room = ?", new, old)
            try db.run("UPDATE room_ghosts SET matrix_room = ?, joined = 0 WHERE matrix_room = ?", new, old)
            try db.run("UPDATE puppets SET matrix_room = ? WHERE matrix_room = ?", new, old)
            try db.run("UPDATE message_map SET matrix_room = ? WHERE matrix_room = ?", new, old)
            try db.run("UPDATE reactions SET matrix_room = ? WHERE matrix_room = ?", new, old)
            try db.run("UPDATE direct_chats SET linked_room = ? WHERE linked_room = ?", new, old)
            try db.run("DELETE FROM matrix_inbox WHERE matrix_room = ?", old)
            try RoomLinkTable.bumpVersion(db)
            link.matrixRoom = new
            link.matrixAlias = nil
            return link
        }
    }
}
