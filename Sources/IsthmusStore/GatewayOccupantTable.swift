import IsthmusCommon

/// `gateway_aliases`: the real spelling of Matrix aliases whose room addresses XMPP folded to lower case
/// (`#matrix%matrix.org` → `#Matrix:matrix.org`), learnt from room directories.
///
/// `gateway_directs`: the Matrix rooms in which an XMPP user's ghost and a Matrix member talk privately, opened by a
/// private message inside a hosted room (XEP-0045 §7.5) and kept for the next ones.
///
/// `gateway_occupants`: the XMPP users in the rooms the component hosts (gateway mode), one row per joined resource,
/// so that a restart of `serve` keeps them in (their ghosts stay in the Matrix rooms meanwhile).
enum GatewayOccupantTable {
    static let schema = """
        CREATE TABLE gateway_occupants (
            room         TEXT NOT NULL,
            resource     TEXT NOT NULL,
            nick         TEXT NOT NULL,
            ghost        TEXT NOT NULL,
            matrix_room  TEXT NOT NULL,
            PRIMARY KEY (room, resource)
        );
        CREATE TABLE gateway_aliases (
            address  TEXT PRIMARY KEY,
            alias    TEXT NOT NULL
        );
        CREATE TABLE gateway_directs (
            ghost        TEXT NOT NULL,
            matrix_user  TEXT NOT NULL,
            matrix_room  TEXT NOT NULL UNIQUE,
            room         TEXT NOT NULL,
            PRIMARY KEY (ghost, matrix_user)
        );
        """
}

/// One joined resource of an XMPP user in a room the component hosts.
public struct GatewayOccupantRecord: Sendable, Equatable {
    /// The room's bare JID on the component.
    public var room: JID
    /// The user's full JID.
    public var resource: JID
    public var nick: String
    public var ghost: UserID
    public var matrixRoom: RoomID

    public init(room: JID, resource: JID, nick: String, ghost: UserID, matrixRoom: RoomID) {
        self.room = room
        self.resource = resource
        self.nick = nick
        self.ghost = ghost
        self.matrixRoom = matrixRoom
    }
}

extension Store {
    /// Every joined resource of every hosted room.
    public func gatewayOccupants() throws -> [GatewayOccupantRecord] {
        try read { db in
            try db.query("SELECT room, resource, nick, ghost, matrix_room FROM gateway_occupants ORDER BY room, resource") { row -> GatewayOccupantRecord? in
                guard let room: JID = row.id(0), let resource: JID = row.id(1), let nick = row.string(2), let ghost: UserID = row.id(3),
                      let matrixRoom: RoomID = row.id(4) else { return nil }
                return GatewayOccupantRecord(room: room, resource: resource, nick: nick, ghost: ghost, matrixRoom: matrixRoom)
            }.compactMap { $0 }
        }
    }

    /// Replaces what is recorded of `room` by `occupants` (all of them its own), in one commit.
    public func replaceGatewayOccupants(of room: JID, with occupants: [GatewayOccupantRecord]) throws {
        try write { db in
            try db.run("DELETE FROM gateway_occupants WHERE room = ?", room.bare.description)
            for occupant in occupants {
                try db.run("INSERT INTO gateway_occupants (room, resource, nick, ghost, matrix_room) VALUES (?, ?, ?, ?, ?)",
                           room.bare.description, occupant.resource.description, occupant.nick, occupant.ghost, occupant.matrixRoom)
            }
        }
    }

    /// The alias an address's localpart (`#matrix%matrix.org`) stands for, when a directory told its spelling.
    public func gatewayAlias(address: String) throws -> RoomAlias? {
        try read { db in
            try db.query("SELECT alias FROM gateway_aliases WHERE address = ?", address) { $0.id(0, as: RoomAlias.self) }.first ?? nil
        }
    }

    /// Records the spelling of aliases by their addresses' localparts (a new spelling replaces the old).
    public func recordGatewayAliases(_ aliases: [String: RoomAlias]) throws {
        guard !aliases.isEmpty else { return }
        try write { db in
            for (address, alias) in aliases.sorted(by: { $0.key < $1.key }) {
                try db.run("INSERT INTO gateway_aliases (address, alias) VALUES (?, ?) ON CONFLICT (address) DO UPDATE SET alias = excluded.alias",
                           address, alias)
            }
        }
    }

    /// Every private room of the hosted rooms: (ghost, Matrix user, its Matrix room, the hosted room it began in).
    public func gatewayDirects() throws -> [(ghost: UserID, user: UserID, matrixRoom: RoomID, room: JID)] {
        try read { db in
            try db.query("SELECT ghost, matrix_user, matrix_room, room FROM gateway_directs ORDER BY matrix_room") { row -> (UserID, UserID, RoomID, JID)? in
                guard let ghost: UserID = row.id(0), let user: UserID = row.id(1), let matrixRoom: RoomID = row.id(2), let room: JID = row.id(3) else {
                    return nil
                }
                return (ghost, user, matrixRoom, room)
            }.compactMap { $0 }.map { (ghost: $0.0, user: $0.1, matrixRoom: $0.2, room: $0.3) }
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
