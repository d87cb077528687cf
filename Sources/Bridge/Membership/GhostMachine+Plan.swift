import IsthmusCommon
import IsthmusStore

/// Which ghost stands for a sender, and what it still needs: pure functions over the machine's tables, used by the
/// machine itself and (through its `Room` view) by the MUC → Matrix delivery.
extension GhostMachine {
    /// The identity a ghost is derived from: the real bare JID when visible (one ghost in every room), else the room
    /// plus its XEP-0421 occupant-id, else the room plus the nick.
    static func identity(muc: JID, nick: String, occupantID: OccupantID?, realJID: JID?) -> String {
        if let realJID { return realJID.bare.description }
        if let occupantID { return "\(muc.bare)#occupant-id:\(occupantID.rawValue)" }
        return "\(muc.bare)#nick:\(nick)"
    }

    /// The ghost for an occupant, the setup it still needs (nil: joined under this nick already), and the occupant as
    /// the tables should now know it (when it is in the room now, `joinedNow`, or known already: what the room said of
    /// its affiliation and role is kept). `rejoining`: plan as if this ghost, with this saved state when known, had
    /// left the Matrix room (the table is changed so first, as it will be once the delivery machine's requests are
    /// applied). Pure.
    func plan(nick: String, occupantID: OccupantID?, realJID: JID?, joinedNow: Bool,
              rejoining: (UserID, RoomGhost?)? = nil) -> MatrixDeliveryMachine.GhostPlan? {
        var ghosts = ghosts
        if let (left, saved) = rejoining {
            if let saved { ghosts[left] = saved }
            ghosts[left]?.joined = false
        }
        let known = occupants[nick]
        let seenID = occupantID ?? known?.occupantID
        let identity = Self.identity(muc: configuration.muc, nick: nick, occupantID: seenID,
                                     realJID: realJID ?? known?.realJID ?? Self.knownRealJID(occupantID: seenID, ghosts: ghosts))
        guard let ghost = known?.ghost ?? configuration.ghostUserID(identity) else { return nil }
        let occupant = joinedNow || known != nil
            ? Occupant(nick: nick, occupantID: seenID, realJID: realJID ?? known?.realJID, ghost: ghost,
                       affiliation: known?.affiliation, role: known?.role)
            : nil
        let stored = ghosts[ghost]
        if let stored, stored.joined, stored.nick == nick { return .init(ghost: ghost, setup: nil, occupant: occupant) }
        let saved = RoomGhost(room: configuration.room, user: ghost, nick: nick, occupantID: occupantID ?? stored?.occupantID,
                              realJID: realJID ?? stored?.realJID, joined: true)
        return .init(ghost: ghost, setup: GhostSetup(ghost: ghost, identity: identity, nick: nick, join: stored?.joined != true, saved: saved),
                     occupant: occupant)
    }

    /// The sender of a private message as the room knows it: what the room said in presence wins over what the
    /// message says (a room that adds no occupant-id leaves a sender's own in place), and the real JID is never the
    /// stanza's own claim. Nil when no ghost can be formed. Pure.
    func privateSender(of message: RoomMessage) -> (message: RoomMessage, identity: String, ghost: UserID)? {
        var sent = message
        let known = occupants[message.nick]
        sent.occupantID = known.map(\.occupantID) ?? message.occupantID
        sent.realJID = known?.realJID ?? Self.knownRealJID(occupantID: sent.occupantID, ghosts: ghosts)
        let identity = Self.identity(muc: configuration.muc, nick: message.nick, occupantID: sent.occupantID, realJID: sent.realJID)
        guard let ghost = known?.ghost ?? configuration.ghostUserID(identity) else { return nil }
        return (sent, identity, ghost)
    }

    /// The real JID of the ghost already seen in this room with `occupantID`, if any. XEP-0421 §4: a room gives one
    /// real JID the same occupant id, so that ghost is the sender's. An archived message (catch-up after a restart,
    /// before any presence) carries the occupant id but no real JID; without this it would get a second ghost, and
    /// a message sent by the first ghost just before a crash would be sent again by the second — a transaction id
    /// counts per sender, so Matrix would keep both. Pure.
    static func knownRealJID(occupantID: OccupantID?, ghosts: [UserID: RoomGhost]) -> JID? {
        guard let occupantID else { return nil }
        return ghosts.values.filter { $0.occupantID == occupantID && $0.realJID != nil }
            .sorted { $0.user.rawValue < $1.user.rawValue }.first?.realJID
    }
}
