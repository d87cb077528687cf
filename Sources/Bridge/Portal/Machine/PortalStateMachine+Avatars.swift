import IsthmusCommon

/// Avatars both ways (XEP-0153 ↔ `m.room.member` `avatar_url`, RICH.md §8): which image each side should show, and
/// only when it changes. Fetching, checking and uploading are the effects' (``AvatarFetcher``).
extension PortalStateMachine {
    /// The room's avatar state.
    struct Avatars: Sendable, Equatable {
        /// The XMPP avatar (SHA-1; nil: none) each ghost has or is being given in the Matrix room; absent: not known
        /// (the next presence that carries a hash sets it).
        var ghosts: [UserID: String?] = [:]
        /// Avatars waiting for their ghost's setup (register, join) to finish.
        var waiting: [UserID: GhostAvatar] = [:]
        /// Each Matrix user's avatar (`mxc://`) in the room, as last handed to the XMPP side.
        var matrixUsers: [UserID: String] = [:]
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
        var mxc: String?
        /// The puppet's nick when it is joined (a presence announcing the change goes out), else nil.
        var nick: String?
    }

    /// An occupant's available presence, after its ghost was planned (`setup`: what the ghost still needs).
    mutating func occupantAvatar(_ presence: RoomPresence, ghost: UserID, setup: GhostSetup?) -> [Action] {
        // A ghost joining the Matrix room anew has no avatar there: whatever was set before must be set again.
        if setup?.join == true { avatars.ghosts.removeValue(forKey: ghost) }
        let wanted: String?
        switch presence.avatar {
        case .photo(let sha1)?: wanted = sha1
        case .none?: wanted = nil
        case .notReady?, nil: return []
        }
        if let known = avatars.ghosts[ghost], known == wanted { return [] }
        avatars.ghosts[ghost] = .some(wanted)
        var sources: [JID] = []
        if let real = presence.realJID ?? occupants[presence.nick]?.realJID { sources.append(real.bare) }
        if let occupant = configuration.muc.bare.with(resource: presence.nick) { sources.append(occupant) }
        let job = GhostAvatar(ghost: ghost, sha1: wanted, sources: sources)
        guard setup == nil else {
            avatars.waiting[ghost] = job
            return []
        }
        avatars.waiting[ghost] = nil
        return [.setGhostAvatar(job)]
    }

    /// The ghost's setup ended: a waiting avatar goes on, or (it failed) is forgotten so the next presence retries.
    mutating func ghostAvatarAfterSetup(_ ghost: UserID, failed: Bool) -> [Action] {
        guard let job = avatars.waiting.removeValue(forKey: ghost) else { return [] }
        if failed {
            avatars.ghosts.removeValue(forKey: ghost)
            return []
        }
        return [.setGhostAvatar(job)]
    }

    /// The ghost left the Matrix room: its avatar there is not known any more.
    mutating func ghostAvatarGone(_ ghost: UserID) {
        avatars.ghosts.removeValue(forKey: ghost)
        avatars.waiting.removeValue(forKey: ghost)
    }

    /// The joined members' avatars, read at an activation (the puppets' joins that follow announce them).
    mutating func memberAvatarsRead(_ avatars: [UserID: String]) -> [Action] {
        avatars.keys.filter(isBridgedMatrixUser).sorted { $0.rawValue < $1.rawValue }
            .flatMap { matrixUserAvatar($0, mxc: avatars[$0], present: true) }
    }

    /// A Matrix user's member event in the room (`mxc`: its `avatar_url`, nil when none; `present`: joined).
    mutating func matrixUserAvatar(_ user: UserID, mxc: String?, present: Bool) -> [Action] {
        let wanted = present ? mxc : nil
        guard avatars.matrixUsers[user] != wanted else { return [] }
        avatars.matrixUsers[user] = wanted
        guard let occupant = configuration.naming.puppetJID(for: user) else { return [] }
        let nick = puppets[user].flatMap { $0.joined ? $0.nick : nil }
        return [.setPuppetAvatar(PuppetAvatar(user: user, occupant: occupant, mxc: wanted, nick: present ? nick : nil))]
    }
}
