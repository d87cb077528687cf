import IsthmusCommon

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
}
