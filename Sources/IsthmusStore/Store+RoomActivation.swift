import FoundationEssentials
import IsthmusCommon

/// What a link's room machine starts from (its portal's `loadRoom`): the room's members on both sides, its resume
/// state and what was last bridged of its subject, name and avatar.
public struct RoomActivation: Sendable, Equatable {
    public var puppets: [Puppet]
    public var ghosts: [RoomGhost]
    /// Whether this activation is the link's first (nothing was recorded before).
    public var firstActivation: Bool
    public var lastStanzaID: StanzaID?
    public var activeSince: Date?
    /// Matrix → XMPP messages still waiting for their reflection, oldest first.
    public var undelivered: [MessageMapping]
    public var texts: RoomTexts
    public var avatar: RoomAvatarRecord?
}

extension Store {
    /// Activates `room`: records `date` as its first activation unless one (or a stanza-id) is recorded, and reads
    /// everything its machine starts from — in one call and one commit, shared with the other rooms activating at the
    /// same time (``groupedWrite(_:)``; issue 26: a start of 1,000 rooms was 8,000 calls and 1,000 commits).
    public func activateRoom(_ room: RoomID, at date: Date) async throws -> RoomActivation {
        try await groupedWrite { db in
            let first = try RoomStateTable.recordFirstActivation(db, room: room, at: date)
            var activation = RoomActivation(
                puppets: try Self.puppets(db, room), ghosts: try Self.roomGhosts(db, room), firstActivation: first,
                undelivered: try Self.undeliveredMappings(db, room), texts: RoomTexts())
            _ = try db.query("""
                SELECT last_stanza_id, active_since, subject, room_name, avatar_sha1, avatar_mxc
                FROM room_state WHERE matrix_room = ?
                """, room) { row in
                activation.lastStanzaID = row.id(0)
                activation.activeSince = row.double(1).map { Date(timeIntervalSince1970: $0) }
                activation.texts = RoomTexts(subject: row.string(2), name: row.string(3))
                if let sha1 = row.string(4), let mxc = row.string(5).flatMap(MXCURI.init(mxc:)) {
                    activation.avatar = RoomAvatarRecord(sha1: sha1, mxc: mxc)
                }
            }
            return activation
        }
    }
}
