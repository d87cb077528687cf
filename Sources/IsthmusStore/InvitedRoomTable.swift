import FoundationEssentials
import IsthmusCommon

/// `invited_rooms`: Matrix rooms the bot joined on an invitation (self-service linking) and when it leaves them again
/// if nothing is linked by then. Kept in the store so a restart does not forget the deadline.
enum InvitedRoomTable {
    static let schema = """
        CREATE TABLE invited_rooms (
            matrix_room  TEXT PRIMARY KEY,
            invited_by   TEXT NOT NULL,
            leave_after  REAL NOT NULL
        );
        """
    /// Migration 6 on PostgreSQL (its `REAL` is 4 bytes: a deadline needs `DOUBLE PRECISION`).
    static let postgresSchema = """
        CREATE TABLE invited_rooms (
            matrix_room  TEXT PRIMARY KEY,
            invited_by   TEXT NOT NULL,
            leave_after  DOUBLE PRECISION NOT NULL
        );
        """
}

/// A room the bot joined on an invitation, with its deadline.
public struct InvitedRoom: Sendable, Equatable {
    public var room: RoomID
    public var invitedBy: UserID
    /// When the bot leaves the room if it is still not linked (wall time).
    public var leaveAfter: Date

    public init(room: RoomID, invitedBy: UserID, leaveAfter: Date) {
        self.room = room
        self.invitedBy = invitedBy
        self.leaveAfter = leaveAfter
    }
}

extension Store {
    /// Records an invitation the bot accepts; an earlier record of the same room keeps its (earlier) deadline.
    public func recordInvitation(_ invited: InvitedRoom) throws {
        try write { db in
            _ = try db.run("INSERT INTO invited_rooms (matrix_room, invited_by, leave_after) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                           invited.room, invited.invitedBy, invited.leaveAfter.timeIntervalSince1970)
        }
    }

    /// Invitations whose deadline is at or before `now`, oldest first.
    public func expiredInvitations(at now: Date) throws -> [InvitedRoom] {
        try read { db in
            try db.query("SELECT matrix_room, invited_by, leave_after FROM invited_rooms WHERE leave_after <= ? ORDER BY leave_after",
                         now.timeIntervalSince1970) { row -> InvitedRoom? in
                guard let room = row.id(0, as: RoomID.self), let user = row.id(1, as: UserID.self), let when = row.double(2) else {
                    return nil
                }
                return InvitedRoom(room: room, invitedBy: user, leaveAfter: Date(timeIntervalSince1970: when))
            }.compactMap { $0 }
        }
    }

    /// Forgets the invitation of `room` (linked, or left).
    public func forgetInvitation(_ room: RoomID) throws {
        try write { db in _ = try db.run("DELETE FROM invited_rooms WHERE matrix_room = ?", room) }
    }
}
