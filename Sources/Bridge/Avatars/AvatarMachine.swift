import IsthmusCommon

/// The ghosts' and puppets' avatars (XEP-0153 ↔ `m.room.member` `avatar_url`, RICH.md §8): which image each side
/// should show, and only when it changes. A sub-machine of ``PortalStateMachine``: it owns its state, reads the room
/// only through the ``Room`` view it is handed with each input, and its actions reach the ``Portal`` wrapped in
/// ``PortalStateMachine/Action/avatars(_:)``. Fetching, checking and uploading are the effects' (``AvatarFetcher``).
/// The room's own avatar is not this machine's (`PortalStateMachine+RoomAvatar`).
struct AvatarMachine: Sendable {
    /// What happened, as far as the ghosts' and puppets' avatars go.
    enum Input: Sendable, Equatable {
        /// An occupant's available presence, after its ghost was planned (`setup`: what the ghost still needs).
        case occupantPresent(RoomPresence, ghost: UserID, setup: GhostSetup?)
        /// The ghost's setup ended: a waiting avatar goes on, or (it failed) is forgotten so the next presence retries.
        case ghostSetUp(UserID, failed: Bool)
        /// The ghost left the Matrix room: its avatar there is not known any more.
        case ghostLeft(UserID)
        /// The joined members' avatars, read at an activation (the puppets' joins that follow announce them).
        case memberAvatarsRead([UserID: MXCURI])
        /// A Matrix user's member event in the room (`mxc`: its `avatar_url`, nil when none; `present`: joined).
        case matrixMember(UserID, mxc: MXCURI?, present: Bool)
    }

    /// What the portal must do, in order.
    enum Action: Sendable, Equatable {
        /// An XMPP occupant's avatar becomes its ghost's per-room avatar (fetched, checked and uploaded once per hash);
        /// failures are logged, no outcome.
        case setGhostAvatar(GhostAvatar)
        /// A Matrix user's avatar becomes its puppet's vCard photo and presence hash (downloaded once per `mxc://`);
        /// failures are logged, no outcome.
        case setPuppetAvatar(PuppetAvatar)

        /// Whether the machine waits for this action's outcome: it never does.
        var awaitsOutcome: Bool { false }
    }

    /// An XMPP occupant's avatar for its ghost's member event in the Matrix room.
    struct GhostAvatar: Sendable, Equatable {
        var ghost: UserID
        /// The SHA-1 the presence announced; nil: the avatar was removed.
        var sha1: String?
        /// Whose vCard holds it, asked in order: the real bare JID when the room shows it, then the occupant JID
        /// (the MUC forwards that request to the occupant's account).
        var sources: [JID]
    }

    /// A Matrix user's avatar for its puppet's vCard and presences.
    struct PuppetAvatar: Sendable, Equatable {
        var user: UserID
        var occupant: JID
        /// nil: no avatar.
        var mxc: MXCURI?
        /// The puppet's nick when it is joined (a presence announcing the change goes out), else nil.
        var nick: String?
    }

    /// What the machine may read of the room's model (kept by the portal machine), handed in with each input.
    struct Room {
        /// The real JID the room showed for the occupant with this nick, if any.
        var occupantRealJID: (_ nick: String) -> JID?
        /// The puppet JID of a Matrix user (nil: none can be formed).
        var puppetJID: (UserID) -> JID?
        /// The nick of the user's puppet when it is joined to the MUC.
        var joinedPuppetNick: (UserID) -> String?
        /// Whether the user is a Matrix user the bridge mirrors (not the bot, not a ghost).
        var isBridged: (UserID) -> Bool
        var muc: JID
    }

    typealias GhostSetup = PortalStateMachine.GhostSetup

    /// The XMPP avatar (SHA-1; nil: none) each ghost has or is being given in the Matrix room; absent: not known
    /// (the next presence that carries a hash sets it).
    var ghosts: [UserID: String?] = [:]
    /// Avatars waiting for their ghost's setup (register, join) to finish.
    var waiting: [UserID: GhostAvatar] = [:]
    /// Each Matrix user's avatar (`mxc://`) in the room, as last handed to the XMPP side.
    var matrixUsers: [UserID: MXCURI] = [:]

    /// Takes one input; returns what to do, in order.
    mutating func receive(_ input: Input, in room: Room) -> [Action] {
        switch input {
        case .occupantPresent(let presence, let ghost, let setup): return occupantPresent(presence, ghost: ghost, setup: setup, in: room)
        case .ghostSetUp(let ghost, let failed): return ghostSetUp(ghost, failed: failed)
        case .ghostLeft(let ghost):
            ghosts.removeValue(forKey: ghost)
            waiting.removeValue(forKey: ghost)
            return []
        case .memberAvatarsRead(let avatars):
            return avatars.keys.filter(room.isBridged).sorted { $0.rawValue < $1.rawValue }
                .flatMap { matrixMember($0, mxc: avatars[$0], present: true, in: room) }
        case .matrixMember(let user, let mxc, let present): return matrixMember(user, mxc: mxc, present: present, in: room)
        }
    }

    private mutating func occupantPresent(_ presence: RoomPresence, ghost: UserID, setup: GhostSetup?, in room: Room) -> [Action] {
        // A ghost joining the Matrix room anew has no avatar there: whatever was set before must be set again.
        if setup?.join == true { ghosts.removeValue(forKey: ghost) }
        let wanted: String?
        switch presence.avatar {
        case .photo(let sha1)?: wanted = sha1
        case .none?: wanted = nil
        case .notReady?, nil: return []
        }
        if let known = ghosts[ghost], known == wanted { return [] }
        ghosts[ghost] = .some(wanted)
        var sources: [JID] = []
        if let real = presence.realJID ?? room.occupantRealJID(presence.nick) { sources.append(real.bare) }
        if let occupant = room.muc.bare.with(resource: presence.nick) { sources.append(occupant) }
        let job = GhostAvatar(ghost: ghost, sha1: wanted, sources: sources)
        guard setup == nil else {
            waiting[ghost] = job
            return []
        }
        waiting[ghost] = nil
        return [.setGhostAvatar(job)]
    }

    private mutating func ghostSetUp(_ ghost: UserID, failed: Bool) -> [Action] {
        guard let job = waiting.removeValue(forKey: ghost) else { return [] }
        if failed {
            ghosts.removeValue(forKey: ghost)
            return []
        }
        return [.setGhostAvatar(job)]
    }

    private mutating func matrixMember(_ user: UserID, mxc: MXCURI?, present: Bool, in room: Room) -> [Action] {
        let wanted = present ? mxc : nil
        guard matrixUsers[user] != wanted else { return [] }
        matrixUsers[user] = wanted
        guard let occupant = room.puppetJID(user) else { return [] }
        return [.setPuppetAvatar(PuppetAvatar(user: user, occupant: occupant, mxc: wanted, nick: present ? room.joinedPuppetNick(user) : nil))]
    }
}
