/// A XEP-0045 status code (`<status code='…'/>` in `muc#user`), §15.6. Kept as a number so unknown codes survive.
public struct MUCStatusCode: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The number, e.g. 110.
    public let rawValue: Int
    /// The value with this raw name or number.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The value with this raw name or number.
    public init(_ rawValue: Int) { self.rawValue = rawValue }
    public var description: String { String(rawValue) }
    /// Orders by number.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    /// 100: the room is non-anonymous (everyone sees real JIDs).
    public static let nonAnonymous = Self(100)
    /// 104: a setting of the room's configuration that does not affect privacy changed (§10.2, a message from the room).
    public static let configurationChanged = Self(104)
    /// 110: this presence is about the receiving occupant itself (self-presence).
    public static let selfPresence = Self(110)
    /// 170: the room is being logged.
    public static let roomLogged = Self(170)
    /// 201: the join created the room; it stays locked until the owner configures it (§10.1).
    public static let roomCreated = Self(201)
    /// 210: the service assigned or changed the occupant's nick.
    public static let nickAssigned = Self(210)
    /// 301: the occupant was banned.
    public static let banned = Self(301)
    /// 303: the occupant changed nick (in the unavailable presence from the old nick, with `<item nick='new'/>`).
    public static let nickChanged = Self(303)
    /// 307: the occupant was kicked.
    public static let kicked = Self(307)
    /// 321: removed because of an affiliation change.
    public static let removedByAffiliationChange = Self(321)
    /// 322: removed because the room became members-only.
    public static let removedMembersOnly = Self(322)
    /// 332: removed because the MUC service is shutting down.
    public static let serviceShutdown = Self(332)
    /// 333: removed because of an error (e.g. a bounce to the occupant's real JID) — seen when a component dropped.
    public static let removedAfterError = Self(333)
}
