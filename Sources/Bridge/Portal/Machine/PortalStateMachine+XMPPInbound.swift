import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The MUC's traffic: messages to Matrix exactly once (or taken as our own reflections), delivery errors of our own
/// messages, and occupants coming, going, renaming and being kicked — each with the ghost that stands for it.
extension PortalStateMachine {
    /// A live MUC message. The component receives one copy per occupant it hosts: only the copy addressed to the
    /// bridge's own occupant is bridged; errors bounced to a puppet are failure reports for our own messages.
    mutating func xmppMessage(_ message: RoomMessage) -> [Action] {
        let bot = configuration.naming.botOccupant
        if let error = message.error {
            if roomState.awaitsAnswer(to: message.id) { return roomState(.subjectRefused(error)) }
            guard let to = message.to, to == bot || puppets.values.contains(where: { $0.occupant == to }),
                  let originID = message.originID ?? message.id?.originID else { return [] }
            let told = invites(.refused(originID, error))
            if !told.isEmpty { return told }
            return xmppDelivery(.bounced(originID, error))
        }
        guard message.to == nil || message.to == bot else { return [] }
        let typing = ephemeral(.occupantTyping(message))
        // XEP-0045 §8.1: a subject without a body is a subject change (or the subject sent on join).
        if let subject = message.subject, message.body == nil { return typing + roomState(.subject(message, text: subject)) }
        // XEP-0045 §10.2: status 104 from the room itself — its configuration (and maybe its name) changed.
        if message.nick.isEmpty, message.statusCodes.contains(.configurationChanged) { return typing + configurationChanged() }
        // Only a chat state or marker (our puppets' own come back from the room too): nothing for the message path.
        if message.isSignalOnly { return typing + ephemeral(.occupantDisplayed(message)) }
        return typing + matrixDelivery(.message(message))
    }

    // MARK: Presences

    /// A MUC presence (copy addressed to the bridge's occupant): occupants join, leave, change nick, get kicked.
    mutating func xmppPresence(_ presence: RoomPresence) -> [Action] {
        if presence.error != nil { return [] }
        guard presence.to == nil || presence.to == configuration.naming.botOccupant else { return [] }
        if presence.nick.isEmpty { return roomState(.roomPresence(presence.avatar)) }   // the room's own presence
        if let destruction = presence.destroyed, presence.statusCodes.contains(.selfPresence) || presence.nick == botNick {
            return roomState(.destroyed(destruction))
        }
        if presence.statusCodes.contains(.selfPresence) || presence.nick == botNick { return ownPresence(presence) }
        if isOurOccupant(nick: presence.nick, realJID: presence.realJID) { return puppetPresence(presence) }
        // A puppet's nick change (303): the machine already holds the new nick, so the old one is not recognised —
        // the new one is. Without this the old nick's departure would look like an XMPP occupant renaming and get a ghost.
        if presence.statusCodes.contains(.nickChanged), let newNick = presence.newNick, isOurOccupant(nick: newNick, realJID: nil) { return [] }
        if presence.available {
            guard let (ghost, setup) = planGhost(nick: presence.nick, occupantID: presence.occupantID, realJID: presence.realJID,
                                                 joinedNow: true) else {
                return [.log(LogEntry(level: .error, message: "Could not set up a ghost", metadata: ["xmpp.nick": presence.nick]))]
            }
            occupants[presence.nick]?.affiliation = presence.affiliation
            occupants[presence.nick]?.role = presence.role
            let avatar = avatars(.occupantPresent(presence, ghost: ghost, setup: setup))
            return roles(.occupantsChanged) + avatar + (setup.map { [.prepareGhost($0)] } ?? [])
        }
        if presence.statusCodes.contains(.nickChanged), let newNick = presence.newNick { return renameOccupant(from: presence.nick, to: newNick) }
        return occupantLeft(presence) + roles(.occupantsChanged)
    }

    /// The bridge's own occupant was removed (kick, ban, shutdown, error): record it; it rejoins unless kicked or banned.
    private mutating func ownPresence(_ presence: RoomPresence) -> [Action] {
        guard !presence.available else { return [] }
        if presence.statusCodes.contains(.nickChanged), let newNick = presence.newNick {
            botNick = newNick
            return []
        }
        botJoined = false
        if presence.statusCodes.contains(.kicked) || presence.statusCodes.contains(.banned) {
            let what = presence.statusCodes.contains(.banned) ? "banned" : "kicked"
            return [.log(LogEntry(level: .error, message: "The bridge was removed from the MUC", metadata: ["xmpp.status": what])),
                    .setStatus(.error, detail: "the bridge was \(what) from the XMPP room\(presence.reason.map { ": \($0)" } ?? "")")]
        }
        let codes = presence.statusCodes.sorted().map(\.description).joined(separator: ",")
        return [.log(LogEntry(level: .warning, message: "The bridge left the MUC; rejoining", metadata: ["xmpp.status": codes]))]
            + startActivation()
    }

    /// One of our puppets left the room without being asked (kicked, banned, removed after an error): it is no longer
    /// joined, so the next message from its Matrix user rejoins it (and reports a refusal to the user).
    private mutating func puppetPresence(_ presence: RoomPresence) -> [Action] {
        guard !presence.available, !presence.statusCodes.contains(.nickChanged),
              let user = puppets.first(where: { $0.value.nick == presence.nick })?.key else { return [] }
        puppets[user]?.joined = false
        return [.log(LogEntry(level: .notice, message: "A Matrix user's occupant was removed from the MUC", metadata: [
            "matrix.user.id": user.rawValue, "xmpp.status": presence.statusCodes.sorted().map(\.description).joined(separator: ","),
        ]))]
    }

    /// XEP-0045 §7.6 nick change (303): the same ghost, a new per-room displayname.
    private mutating func renameOccupant(from old: String, to new: String) -> [Action] {
        guard var occupant = occupants.removeValue(forKey: old) else {
            guard let (_, setup) = planGhost(nick: new, occupantID: nil, realJID: nil, joinedNow: true) else { return [] }
            return setup.map { [.prepareGhost($0)] } ?? []
        }
        occupant.nick = new
        occupants[new] = occupant
        guard let ghost = occupant.ghost else { return [] }
        let renamed = RoomGhost(room: configuration.room, user: ghost, nick: new, occupantID: occupant.occupantID,
                                realJID: occupant.realJID, joined: true)
        ghosts[ghost] = renamed
        return [.renameGhost(renamed)]
    }

    /// An occupant left, was kicked (307) or banned (301): its ghost leaves, or the bot removes it to show why.
    private mutating func occupantLeft(_ presence: RoomPresence) -> [Action] {
        let occupant = occupants.removeValue(forKey: presence.nick)
        let identity = Self.ghostIdentity(muc: configuration.muc, nick: presence.nick,
                                          occupantID: presence.occupantID ?? occupant?.occupantID,
                                          realJID: presence.realJID ?? occupant?.realJID)
        guard let ghost = occupant?.ghost ?? configuration.ghostUserID(identity) else { return [] }
        let banned = presence.statusCodes.contains(.banned)
        let removal: GhostRemoval = banned || presence.statusCodes.contains(.kicked)
            ? .kick(ban: banned, reason: "\(banned ? "Banned" : "Kicked") in the XMPP room" + (presence.reason.map { ": \($0)" } ?? ""))
            : .leave
        var left = ghosts[ghost]
        left?.joined = false
        if let left { ghosts[ghost] = left }
        return avatars(.ghostLeft(ghost)) + [.removeGhost(ghost, removal, saving: left)]
    }

    /// After a (re)join the occupant list is complete: ghosts still joined for occupants that are gone leave.
    mutating func reconcileGhosts() -> [Action] {
        let present = Set(occupants.values.compactMap(\.ghost))
        let stale = ghosts.values.filter { $0.joined && !present.contains($0.user) }.sorted { $0.user.rawValue < $1.user.rawValue }
        let removals: [Action] = stale.flatMap { ghost in
            var left = ghost
            left.joined = false
            ghosts[ghost.user] = left
            return avatars(.ghostLeft(ghost.user)) + [.removeGhost(ghost.user, .leave, saving: left)]
        }
        // The occupant list is complete: the ghosts' power levels can follow it now.
        return removals + roles(.occupantListComplete)
    }

    // MARK: Ghosts

    /// The identity a ghost is derived from: the real bare JID when visible (one ghost in every room), else the room
    /// plus its XEP-0421 occupant-id, else the room plus the nick.
    static func ghostIdentity(muc: JID, nick: String, occupantID: OccupantID?, realJID: JID?) -> String {
        if let realJID { return realJID.bare.description }
        if let occupantID { return "\(muc.bare)#occupant-id:\(occupantID.rawValue)" }
        return "\(muc.bare)#nick:\(nick)"
    }

    /// The ghost for an occupant, and the setup it still needs (nil: joined under this nick already); the occupant is
    /// recorded when it is in the room now (`joinedNow`) or known already.
    mutating func planGhost(nick: String, occupantID: OccupantID?, realJID: JID?, joinedNow: Bool) -> (UserID, GhostSetup?)? {
        guard let plan = Self.ghostPlan(nick: nick, occupantID: occupantID, realJID: realJID, joinedNow: joinedNow, rejoining: nil,
                                        occupants: occupants, ghosts: ghosts, configuration: configuration) else { return nil }
        if let occupant = plan.occupant { occupants[occupant.nick] = occupant }
        return (plan.ghost, plan.setup)
    }

    /// The same as a plan over copies of the model, for the delivery machine's view. `rejoining`: plan as if this
    /// ghost, with this saved state when known, had left the Matrix room (the table is changed so first, as the
    /// model will be once the delivery machine's requests are applied). Pure.
    static func ghostPlan(nick: String, occupantID: OccupantID?, realJID: JID?, joinedNow: Bool, rejoining: (UserID, RoomGhost?)?,
                          occupants: [String: Occupant], ghosts: [UserID: RoomGhost],
                          configuration: Configuration) -> MatrixDeliveryMachine.GhostPlan? {
        var ghosts = ghosts
        if let (left, saved) = rejoining {
            if let saved { ghosts[left] = saved }
            ghosts[left]?.joined = false
        }
        let known = occupants[nick]
        let identity = ghostIdentity(muc: configuration.muc, nick: nick, occupantID: occupantID ?? known?.occupantID,
                                     realJID: realJID ?? known?.realJID ?? knownRealJID(occupantID: occupantID ?? known?.occupantID, ghosts: ghosts))
        guard let ghost = known?.ghost ?? configuration.ghostUserID(identity) else { return nil }
        let occupant = joinedNow || known != nil
            ? Occupant(nick: nick, occupantID: occupantID ?? known?.occupantID, realJID: realJID ?? known?.realJID, ghost: ghost) : nil
        let stored = ghosts[ghost]
        if let stored, stored.joined, stored.nick == nick { return .init(ghost: ghost, setup: nil, occupant: occupant) }
        let saved = RoomGhost(room: configuration.room, user: ghost, nick: nick, occupantID: occupantID ?? stored?.occupantID,
                              realJID: realJID ?? stored?.realJID, joined: true)
        return .init(ghost: ghost, setup: GhostSetup(ghost: ghost, identity: identity, nick: nick, join: stored?.joined != true, saved: saved),
                     occupant: occupant)
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

    mutating func ghostPrepared(_ setup: GhostSetup, error: MatrixFailure?) -> [Action] {
        if let error {
            return [.log(LogEntry(level: .error, message: "Could not set up a ghost", metadata: ["xmpp.nick": setup.nick, "error": "\(error)"]))]
                + avatars(.ghostSetUp(setup.ghost, failed: true))
        }
        ghosts[setup.ghost] = setup.saved
        return [.log(LogEntry(level: .debug, message: "Ghost ready", metadata: ["matrix.user.id": setup.ghost.rawValue, "xmpp.nick": setup.nick]))]
            + avatars(.ghostSetUp(setup.ghost, failed: false))
    }
}
