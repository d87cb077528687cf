import IsthmusCommon

/// Content of `m.room.power_levels` (spec §10.5 "m.room.power_levels"). Pure value.
///
/// Levels decode leniently: old rooms hold some as strings ("50"); values that are not numbers are skipped.
/// Absent fields take the spec's defaults through the accessors (``level(of:)``, ``ban`` …).
public struct PowerLevelsContent: Sendable, Equatable, Codable {
    public var users: [String: Int64]
    public var usersDefault: Int64?
    public var events: [String: Int64]
    public var eventsDefault: Int64?
    public var stateDefault: Int64?
    public var banLevel: Int64?
    public var kickLevel: Int64?
    public var redactLevel: Int64?
    public var inviteLevel: Int64?

    public init(users: [String: Int64] = [:], usersDefault: Int64? = nil, events: [String: Int64] = [:],
                eventsDefault: Int64? = nil, stateDefault: Int64? = nil, ban: Int64? = nil, kick: Int64? = nil,
                redact: Int64? = nil, invite: Int64? = nil) {
        self.users = users
        self.usersDefault = usersDefault
        self.events = events
        self.eventsDefault = eventsDefault
        self.stateDefault = stateDefault
        banLevel = ban
        kickLevel = kick
        redactLevel = redact
        inviteLevel = invite
    }

    /// The level of `user` (`users_default`, else 0, when not listed).
    public func level(of user: UserID) -> Int64 { users[user.rawValue] ?? usersDefault ?? 0 }

    /// Levels needed to ban, kick, redact others' events and invite (spec defaults 50, 50, 50, 0).
    public var ban: Int64 { banLevel ?? 50 }
    public var kick: Int64 { kickLevel ?? 50 }
    public var redact: Int64 { redactLevel ?? 50 }
    public var invite: Int64 { inviteLevel ?? 0 }

    enum CodingKeys: String, CodingKey {
        case users
        case usersDefault = "users_default"
        case events
        case eventsDefault = "events_default"
        case stateDefault = "state_default"
        case banLevel = "ban"
        case kickLevel = "kick"
        case redactLevel = "redact"
        case inviteLevel = "invite"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        users = Self.levels(container, .users)
        events = Self.levels(container, .events)
        usersDefault = LenientInteger.decode(container, .usersDefault)
        eventsDefault = LenientInteger.decode(container, .eventsDefault)
        stateDefault = LenientInteger.decode(container, .stateDefault)
        banLevel = LenientInteger.decode(container, .banLevel)
        kickLevel = LenientInteger.decode(container, .kickLevel)
        redactLevel = LenientInteger.decode(container, .redactLevel)
        inviteLevel = LenientInteger.decode(container, .inviteLevel)
    }

    private static func levels(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) -> [String: Int64] {
        guard let raw = try? container.decodeIfPresent([String: JSONValue].self, forKey: key) else { return [:] }
        var result: [String: Int64] = [:]
        for (name, value) in raw {
            switch value {
            case .integer(let level): result[name] = level
            case .double(let level) where level.isFinite && level.magnitude < 9.0e15: result[name] = Int64(level)
            case .string(let text): if let level = Int64(text) { result[name] = level }
            default: continue
            }
        }
        return result
    }
}
