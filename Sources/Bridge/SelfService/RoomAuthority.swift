import FoundationEssentials
import IsthmusCommon
import Matrix
import MatrixClient

/// Who may manage a Matrix room's bridge, and how the room is named to the MUC owner, from the room's current state.
/// Pure value, built from the state events (see ``MatrixClient/roomState(_:as:)``).
///
/// The rule (like mautrix's `bridge` command and the IRC bridge's provisioning): a user may link or unlink a room
/// when their power level reaches the level to send state events, `state_default` (50 when absent). In room version
/// 12 and later the creators — the `m.room.create` sender and its `additional_creators` — have infinite power and are
/// not listed in `users` (spec `rooms/v12.md`, "Room creators"). A room without `m.room.power_levels` gives its creator
/// 100 and everyone else 0 with a requirement of 0 (spec, `m.room.power_levels`); the bridge is stricter there and
/// lets only the creators manage it.
struct RoomAuthority: Sendable, Equatable {
    /// `m.room.create`'s `room_version` ("1" when absent, as the spec says).
    var roomVersion = "1"
    /// The `m.room.create` sender (or its `creator` field in rooms before version 11) and `additional_creators`.
    var creators: Set<UserID> = []
    var powerLevels: PowerLevelsContent?
    /// `m.room.name`, when set and not empty.
    var name: String?
    /// `m.room.canonical_alias`, when set.
    var canonicalAlias: RoomAlias?
    /// Per-room displaynames of joined members.
    var displaynames: [UserID: String] = [:]

    init(roomVersion: String = "1", creators: Set<UserID> = [], powerLevels: PowerLevelsContent? = nil, name: String? = nil,
         canonicalAlias: RoomAlias? = nil, displaynames: [UserID: String] = [:]) {
        self.roomVersion = roomVersion
        self.creators = creators
        self.powerLevels = powerLevels
        self.name = name
        self.canonicalAlias = canonicalAlias
        self.displaynames = displaynames
    }

    init(state: [RoomStateEvent]) {
        for event in state {
            switch (event.type, event.stateKey) {
            case (MatrixEventType.create, ""):
                roomVersion = event.content["room_version"]?.stringValue ?? "1"
                if let sender = UserID(event.sender) { creators.insert(sender) }
                if let creator = event.content["creator"]?.stringValue.flatMap(UserID.init) { creators.insert(creator) }
                if case .array(let more)? = event.content["additional_creators"] {
                    creators.formUnion(more.compactMap { $0.stringValue.flatMap(UserID.init) })
                }
            case (MatrixEventType.powerLevels, ""):
                powerLevels = PowerLevelsContent.decoded(event.content)
            case (MatrixEventType.roomName, ""):
                name = event.content["name"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            case (MatrixEventType.canonicalAlias, ""):
                canonicalAlias = event.content["alias"]?.stringValue.flatMap(RoomAlias.init)
            case (MatrixEventType.member, let key):
                guard let user = UserID(key), event.content["membership"]?.stringValue == Membership.join.rawValue,
                      let name = event.content["displayname"]?.stringValue, !name.isEmpty else { continue }
                displaynames[user] = name
            default:
                continue
            }
        }
    }

    /// Whether creators have infinite power in this room version (12 and later; `org.matrix.hydra.11` is its preview).
    var creatorsArePrivileged: Bool {
        if let number = Int(roomVersion) { return number >= 12 }
        return roomVersion == "org.matrix.hydra.11"
    }

    /// The level needed to manage the bridge: `state_default`, 50 when absent.
    var requiredLevel: Int64 { powerLevels?.stateDefault ?? 50 }

    /// Whether `user` may link or unlink this room; when not, the refusal to show them.
    func mayManageBridge(_ user: UserID) -> Refusal? {
        if creators.contains(user), creatorsArePrivileged || powerLevels == nil { return nil }
        guard let powerLevels else { return .notCreator }
        let level = powerLevels.level(of: user)
        return level >= requiredLevel ? nil : .tooLow(have: level, need: requiredLevel)
    }

    /// Why a user may not manage the bridge.
    enum Refusal: Sendable, Equatable, CustomStringConvertible {
        case tooLow(have: Int64, need: Int64)
        case notCreator

        var description: String {
            switch self {
            case .tooLow(let have, let need):
                "Only members with power level \(need) or more (enough to change the room's settings) may manage its bridge; you have \(have)."
            case .notCreator:
                "This room has no power levels: only its creator may manage its bridge."
            }
        }
    }

    /// The room as the MUC owner reads it: "“Name” (#alias:server)", the name or the alias alone, or a description
    /// when it has neither (its id is a Matrix id and stays out of XMPP).
    var label: String {
        switch (name, canonicalAlias) {
        case (let name?, let alias?): "“\(name)” (\(alias.rawValue))"
        case (let name?, nil): "“\(name)”"
        case (nil, let alias?): alias.rawValue
        case (nil, nil): "(a room without a name or public address)"
        }
    }

    /// `user` as the MUC owner reads them: their displayname in the room, else their localpart (as their puppet's
    /// nick would be), cleaned like a nick.
    func displayname(of user: UserID) -> String {
        BridgeNaming.sanitizeNick(displaynames[user] ?? user.localpart)
    }
}
