import IsthmusCommon

/// `puppets`: Matrix users' occupants in linked MUCs — their JID under the component and the nick they hold.
enum PuppetTable {
    static let schema = """
        CREATE TABLE puppets (
            matrix_room   TEXT NOT NULL,
            matrix_user   TEXT NOT NULL,
            occupant      TEXT NOT NULL,
            nick          TEXT NOT NULL,
            displayname   TEXT NOT NULL,
            joined        INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (matrix_room, matrix_user)
        );
        """
}

/// A Matrix user's occupant in one MUC.
public struct Puppet: Sendable, Equatable {
    public var room: RoomID
    public var user: UserID
    /// The real JID the occupant is under (`…@component/…`), stable across restarts.
    public var occupant: JID
    /// The nick held in the MUC (the displayname, or a deterministic alternative after a conflict).
    public var nick: String
    /// The Matrix displayname the nick was derived from (a change of it triggers a nick change).
    public var displayname: String
    public var joined: Bool

    public init(room: RoomID, user: UserID, occupant: JID, nick: String, displayname: String, joined: Bool) {
        self.room = room
        self.user = user
        self.occupant = occupant
        self.nick = nick
        self.displayname = displayname
        self.joined = joined
    }
}

extension Store {
    /// The puppets of `room`.
    public func puppets(_ room: RoomID) throws -> [Puppet] {
        try read { db in try Self.puppets(db, room) }
    }

    static func puppets(_ db: Database, _ room: RoomID) throws -> [Puppet] {
        try db.query("SELECT matrix_user, occupant, nick, displayname, joined FROM puppets WHERE matrix_room = ?", room) { row in
            Puppet(room: room, user: row.id(0)!, occupant: row.id(1)!, nick: row.string(2) ?? "",
                   displayname: row.string(3) ?? "", joined: (row.int(4) ?? 0) != 0)
        }
    }

    /// Inserts or replaces a puppet.
    public func savePuppet(_ puppet: Puppet) async throws {
        try await groupedWrite { db in
            _ = try db.run("""
                INSERT INTO puppets (matrix_room, matrix_user, occupant, nick, displayname, joined) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (matrix_room, matrix_user) DO UPDATE SET occupant = excluded.occupant, nick = excluded.nick,
                    displayname = excluded.displayname, joined = excluded.joined
                """, puppet.room, puppet.user, puppet.occupant, puppet.nick, puppet.displayname, puppet.joined)
        }
    }

    /// Forgets one puppet.
    public func deletePuppet(room: RoomID, user: UserID) async throws {
        try await groupedWrite { db in _ = try db.run("DELETE FROM puppets WHERE matrix_room = ? AND matrix_user = ?", room, user) }
    }

    /// Forgets every puppet of `room` (after unlink).
    public func deletePuppets(_ room: RoomID) throws {
        try write { db in _ = try db.run("DELETE FROM puppets WHERE matrix_room = ?", room) }
    }
}
