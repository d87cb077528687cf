import IsthmusCommon

/// Content of `m.room.member` (spec §10.2 "m.room.member"): membership plus the per-room profile. Pure value.
public struct MemberContent: Sendable, Equatable, Codable {
    /// `membership`: join, invite, leave, ban, knock (other strings are kept).
    public var membership: Membership
    /// `displayname` — the per-room display name.
    public var displayName: String?
    /// `avatar_url` — the per-room avatar, an `mxc://` URI.
    public var avatarURL: String?
    /// `reason` given for a kick, ban, leave or invite.
    public var reason: String?
    /// `is_direct` on invites for direct chats.
    public var isDirect: Bool?

    public init(membership: Membership, displayName: String? = nil, avatarURL: String? = nil, reason: String? = nil, isDirect: Bool? = nil) {
        self.membership = membership
        self.displayName = displayName
        self.avatarURL = avatarURL
        self.reason = reason
        self.isDirect = isDirect
    }

    enum CodingKeys: String, CodingKey {
        case membership
        case displayName = "displayname"
        case avatarURL = "avatar_url"
        case reason
        case isDirect = "is_direct"
    }

    /// Decodes leniently: a `displayname` or `avatar_url` that is not a string (seen in the wild) reads as nil.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        membership = try container.decode(Membership.self, forKey: .membership)
        displayName = try? container.decodeIfPresent(String.self, forKey: .displayName)
        avatarURL = try? container.decodeIfPresent(String.self, forKey: .avatarURL)
        reason = try? container.decodeIfPresent(String.self, forKey: .reason)
        isDirect = try? container.decodeIfPresent(Bool.self, forKey: .isDirect)
    }
}

/// A membership state of `m.room.member`. Any string is accepted; the spec's states are constants.
public struct Membership: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public static let join = Membership(rawValue: "join")
    public static let invite = Membership(rawValue: "invite")
    public static let leave = Membership(rawValue: "leave")
    public static let ban = Membership(rawValue: "ban")
    public static let knock = Membership(rawValue: "knock")

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
