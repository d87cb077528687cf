import IsthmusCommon

/// `room_links`: which Matrix room is linked with which MUC, and how far `serve` has got with it.
enum RoomLinkTable {
    static let schema = """
        CREATE TABLE room_links (
            matrix_room   TEXT PRIMARY KEY,
            matrix_alias  TEXT,
            muc           TEXT NOT NULL UNIQUE,
            status        TEXT NOT NULL DEFAULT 'pending',
            detail        TEXT,
            unlinking     INTEGER NOT NULL DEFAULT 0,
            created_at    INTEGER NOT NULL DEFAULT (strftime('%s','now'))
        );
        """
    static let columns = "matrix_room, matrix_alias, muc, status, detail, unlinking, archive, matrix_moderators, sync_name, muc_destroyed"
    /// Migration 4: whether the MUC keeps an archive with stanza-ids (NULL: not known yet).
    static let archiveColumn = "ALTER TABLE room_links ADD COLUMN archive INTEGER;"
    /// Migration 8: the link's opt-in that makes Matrix moderators' occupants MUC moderators.
    static let matrixModeratorsColumn = "ALTER TABLE room_links ADD COLUMN matrix_moderators INTEGER NOT NULL DEFAULT 0;"
    /// Migration 10: whether the MUC's name is copied to the Matrix room (`link --sync-name`), and whether the MUC was
    /// destroyed.
    static let syncNameColumn = """
        ALTER TABLE room_links ADD COLUMN sync_name INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE room_links ADD COLUMN muc_destroyed INTEGER NOT NULL DEFAULT 0;
        """
}

/// One linked pair of rooms.
public struct RoomLink: Sendable, Equatable {
    /// Lifecycle of a link as shown by `isthmus links`.
    public enum Status: String, Sendable, Equatable {
        /// Recorded; `serve` has not yet joined both sides.
        case pending
        /// Both sides joined; bridging.
        case active
        /// Something failed; `detail` says what.
        case error
    }

    public var matrixRoom: RoomID
    public var matrixAlias: RoomAlias?
    public var muc: JID
    public var status: Status
    public var detail: String?
    /// Set by `unlink`; `serve` cleans up both sides, then deletes the row.
    public var unlinking: Bool
    /// Whether the MUC announces stanza-ids (XEP-0359 `urn:xmpp:sid:0` in its disco#info), which the bridge takes as
    /// the sign that it archives: without them nothing missed during downtime can be caught up. nil until `serve`
    /// has asked the room.
    public var archive: Bool?
    /// Opt-in (`isthmus link --matrix-moderators`): Matrix users with power level 50 or more get the MUC *role*
    /// moderator for their occupant (never an affiliation). Off by default: XMPP is the authority on its room.
    public var matrixModeratorsToMUC: Bool
    /// Whether the MUC's name (disco#info `muc#roomconfig_roomname`) is copied to the Matrix room's `m.room.name`
    /// (`isthmus link --sync-name`). Off by default: the Matrix room keeps its own name.
    public var syncName: Bool
    /// Whether the MUC was destroyed (XEP-0045 §10.9): `serve` does not join it again (that would create a new room).
    public var mucDestroyed: Bool

    public init(matrixRoom: RoomID, matrixAlias: RoomAlias?, muc: JID, status: Status = .pending, detail: String? = nil,
                unlinking: Bool = false, archive: Bool? = nil, matrixModeratorsToMUC: Bool = false, syncName: Bool = false,
                mucDestroyed: Bool = false) {
        self.matrixModeratorsToMUC = matrixModeratorsToMUC
        self.syncName = syncName
        self.mucDestroyed = mucDestroyed
        self.matrixRoom = matrixRoom
        self.matrixAlias = matrixAlias
        self.muc = muc
        self.status = status
        self.detail = detail
        self.unlinking = unlinking
        self.archive = archive
    }
}

/// Why a link could not be recorded.
public enum RoomLinkConflict: Error, Sendable, Equatable {
    case matrixRoomAlreadyLinked(RoomLink)
    case mucAlreadyLinked(RoomLink)
}

extension Store {
    /// All links, oldest first (including ones being unlinked).
    public func roomLinks() throws -> [RoomLink] {
        try read { db in
            try db.query("SELECT \(RoomLinkTable.columns) FROM room_links ORDER BY created_at, rowid", map: RoomLinkTable.decode)
                .compactMap { $0 }
        }
    }

    /// Which of `rooms` are linked and not being unlinked (one indexed lookup each: this runs for every homeserver
    /// transaction, where reading every link would cost in proportion to the number of links).
    public func linkedRooms(among rooms: Set<RoomID>) throws -> Set<RoomID> {
        try read { db in
            var linked: Set<RoomID> = []
            for room in rooms where try !db.query("SELECT 1 FROM room_links WHERE matrix_room = ? AND unlinking = 0", room, map: { _ in true }).isEmpty {
                linked.insert(room)
            }
            return linked
        }
    }

    /// Records a new pending link; throws ``RoomLinkConflict`` when either side is already linked.
    public func insertRoomLink(_ link: RoomLink) throws {
        try write { db in
            let existing = try db.query(
                "SELECT \(RoomLinkTable.columns) FROM room_links WHERE matrix_room = ? OR muc = ?",
                link.matrixRoom, link.muc.bare.description, map: RoomLinkTable.decode
            ).compactMap { $0 }
            if let other = existing.first(where: { $0.matrixRoom == link.matrixRoom }) {
                throw RoomLinkConflict.matrixRoomAlreadyLinked(other)
            }
            if let other = existing.first { throw RoomLinkConflict.mucAlreadyLinked(other) }
            try db.run(
                "INSERT INTO room_links (matrix_room, matrix_alias, muc, status, detail, unlinking, matrix_moderators, sync_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                link.matrixRoom, link.matrixAlias?.description, link.muc.bare.description, link.status.rawValue, link.detail,
                link.unlinking, link.matrixModeratorsToMUC, link.syncName)
        }
        localLinkChanges += 1
    }

    /// Records whether the link's MUC keeps an archive with stanza-ids (no-op for unknown rooms).
    public func updateRoomLinkArchive(_ room: RoomID, archive: Bool) throws {
        try write { db in
            try db.run("UPDATE room_links SET archive = ? WHERE matrix_room = ?", archive ? 1 : 0, room)
        }
    }

    /// Sets a link's status and detail (no-op for unknown rooms).
    public func updateRoomLinkStatus(_ room: RoomID, status: RoomLink.Status, detail: String?) throws {
        try write { db in
            try db.run("UPDATE room_links SET status = ?, detail = ? WHERE matrix_room = ?", status.rawValue, detail, room)
        }
    }

    /// Records that a link's MUC was destroyed: status `error` with `detail`, and no joining it again.
    public func markRoomLinkDestroyed(_ room: RoomID, detail: String) throws {
        try write { db in
            try db.run("UPDATE room_links SET status = 'error', detail = ?, muc_destroyed = 1 WHERE matrix_room = ?", detail, room)
        }
    }

    /// Marks a link for clean-up by `serve`; returns the link, or nil when nothing matches.
    public func markUnlinking(matrixRoom: RoomID? = nil, muc: JID? = nil) throws -> RoomLink? {
        let result = try write { db -> RoomLink? in
            let rows: [RoomLink?] = try db.query(
                "SELECT \(RoomLinkTable.columns) FROM room_links WHERE matrix_room = ? OR muc = ?",
                matrixRoom?.description, muc?.bare.description, map: RoomLinkTable.decode)
            guard var link = rows.compactMap({ $0 }).first else { return nil }
            try db.run("UPDATE room_links SET unlinking = 1 WHERE matrix_room = ?", link.matrixRoom)
            link.unlinking = true
            return link
        }
        localLinkChanges += 1
        return result
    }

    /// Deletes a link once both sides are cleaned up.
    public func deleteRoomLink(_ room: RoomID) throws {
        try write { db in _ = try db.run("DELETE FROM room_links WHERE matrix_room = ?", room) }
        localLinkChanges += 1
    }
}

extension RoomLinkTable {
    static func decode(_ row: SQLiteConnection.Row) -> RoomLink? {
        guard let room: RoomID = row.id(0), let muc: JID = row.id(2),
              let status = RoomLink.Status(rawValue: row.string(3) ?? "") else { return nil }
        return RoomLink(matrixRoom: room, matrixAlias: row.id(1), muc: muc, status: status, detail: row.string(4),
                        unlinking: (row.int(5) ?? 0) != 0, archive: row.int(6).map { $0 != 0 },
                        matrixModeratorsToMUC: (row.int(7) ?? 0) != 0, syncName: (row.int(8) ?? 0) != 0,
                        mucDestroyed: (row.int(9) ?? 0) != 0)
    }
}
