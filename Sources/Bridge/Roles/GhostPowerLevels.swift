import FoundationEssentials
import IsthmusCommon
import Matrix

/// What a room's state says about power: enough to change ghosts' levels without clobbering anything else.
public struct RoomPowerState: Sendable, Equatable {
    /// `m.room.create`'s `room_version` ("1" when absent).
    public var roomVersion: String
    /// The room's creators (the `m.room.create` sender, `creator`, `additional_creators`).
    public var creators: Set<UserID>
    /// The current `m.room.power_levels` content exactly as read (nil: the room has none).
    public var powerLevels: JSONValue?

    public init(roomVersion: String = "1", creators: Set<UserID> = [], powerLevels: JSONValue?) {
        self.roomVersion = roomVersion
        self.creators = creators
        self.powerLevels = powerLevels
    }
}

extension RoomPowerState {
    /// The power levels decoded (leniently: levels as strings are read, other oddities skipped); nil when there are none.
    var decodedPowerLevels: PowerLevelsContent? {
        powerLevels.flatMap(PowerLevelsContent.decoded)
    }
}

extension PowerLevelsContent {
    /// `content` (an `m.room.power_levels` content as it came) decoded; nil when it does not decode.
    static func decoded(_ content: JSONValue) -> PowerLevelsContent? {
        (try? JSONEncoder().encode(content)).flatMap { try? JSONDecoder().decode(PowerLevelsContent.self, from: $0) }
    }

    /// The listed users' levels by user id (keys that are not user ids are skipped; of two spellings, the higher wins).
    var userLevels: [UserID: Int64] {
        Dictionary(users.compactMap { key, level in UserID(key).map { ($0, level) } }, uniquingKeysWith: max)
    }
}

/// The power levels the MUC's roles give ghosts (RICH.md §10: XMPP is authoritative for the MUC, one way only), and
/// the read-modify-write of `m.room.power_levels` that applies them. Pure value.
///
/// Only ghosts' entries in `users` are touched; every other key of the content, and every other user's level, is
/// written back exactly as read. The bridge never gives a level at or above the bot's own, never changes a user whose
/// level is at or above the bot's (Matrix auth rules, v1 rule 10), and does nothing where the bot may not send
/// `m.room.power_levels`.
struct GhostPowerLevels: Sendable, Equatable {
    /// The level wanted for each ghost with a role worth one (ghosts not listed get none: `users_default`).
    var wanted: [UserID: Int64]

    /// What applying the wanted levels to a room's state comes to.
    enum Plan: Sendable, Equatable {
        /// Nothing to change.
        case unchanged
        /// Send this content. `capped`: ghosts given less than wanted (the bot's level is the ceiling);
        /// `untouchable`: ghosts left as they are (their level is at or above the bot's).
        case update(JSONValue, capped: [UserID], untouchable: [UserID])
        /// The bot may not send `m.room.power_levels` (its level, nil when the room has no power levels, and the need).
        case noPower(have: Int64?, need: Int64)
    }

    /// The new content for `state`: ghosts (per `isGhost`) in `wanted` get their level, others listed lose theirs.
    func plan(_ state: RoomPowerState, bot: UserID, isGhost: (UserID) -> Bool) -> Plan {
        guard case .object(var content)? = state.powerLevels else { return .noPower(have: nil, need: 50) }
        let decoded = state.decodedPowerLevels ?? PowerLevelsContent()
        let authority = RoomAuthority(roomVersion: state.roomVersion, creators: state.creators)
        // v12: creators have infinite power and are never listed (spec rooms/v12, "Room creators").
        let botIsCreator = authority.creatorsArePrivileged && state.creators.contains(bot)
        let botLevel: Int64? = botIsCreator ? nil : decoded.level(of: bot)
        let need = decoded.events[MatrixEventType.powerLevels] ?? decoded.stateDefault ?? 50
        if let botLevel, botLevel < need { return .noPower(have: botLevel, need: need) }
        var listed: [String: JSONValue] = [:]
        if case .object(let members)? = content["users"] { listed = members }
        let usersDefault = decoded.usersDefault ?? 0
        var users = listed
        var capped: [UserID] = []
        var untouchable: [UserID] = []
        let ghostsListed = listed.keys.compactMap(UserID.init).filter(isGhost)
        for ghost in Set(ghostsListed).union(wanted.keys).sorted(by: { $0.rawValue < $1.rawValue }) {
            if authority.creatorsArePrivileged, state.creators.contains(ghost) { continue }
            let current = decoded.users[ghost.rawValue]
            if let botLevel, let current, current >= botLevel {
                if current != wanted[ghost] { untouchable.append(ghost) }
                continue
            }
            var level = wanted[ghost] ?? usersDefault
            if let botLevel, level >= botLevel {
                level = botLevel - 1
                capped.append(ghost)
            }
            users[ghost.rawValue] = level > usersDefault ? .integer(level) : nil
        }
        guard users != listed else { return .unchanged }
        content["users"] = .object(users)
        return .update(.object(content), capped: capped, untouchable: untouchable)
    }
}

extension GhostPowerLevels {
    /// The levels the roles of a MUC occupant give its ghost: the highest of what its affiliation and its role give
    /// (configurable; owner 100, admin 50, moderator 50 by default). nil: none (`users_default`).
    static func level(affiliation: MUCAffiliation?, role: MUCRole?, levels: RoleLevels) -> Int64? {
        var best: Int64?
        switch affiliation {
        case .owner?: best = levels.owner
        case .admin?: best = levels.admin
        default: break
        }
        if role == .moderator { best = max(best ?? levels.moderator, levels.moderator) }
        return best.flatMap { $0 > 0 ? $0 : nil }
    }
}

/// The Matrix power level each MUC position gives a ghost (config `power_levels:`; 0 turns one off).
public struct RoleLevels: Sendable, Equatable {
    public var owner: Int64
    public var admin: Int64
    public var moderator: Int64

    /// The levels; the defaults are RICH.md §10's (owner 100, admin 50, moderator 50).
    public init(owner: Int64 = 100, admin: Int64 = 50, moderator: Int64 = 50) {
        self.owner = owner
        self.admin = admin
        self.moderator = moderator
    }
}
