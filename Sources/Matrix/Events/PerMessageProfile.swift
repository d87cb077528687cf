/// MSC4144 per-message profile: who a bridge bot's message speaks for, shown by clients that know it instead of the
/// bot's own name (`com.beeper.per_message_profile` until the MSC is merged; mautrix writes the same). Clients that do
/// not know it read the fallback the sender put in the body (``hasFallback``). Pure value.
public struct PerMessageProfile: Sendable, Equatable, Codable {
    /// A stable id of the person spoken for (the same for all their messages, never reused for another).
    public var id: String
    public var displayname: String?
    /// `avatar_url`: an `mxc://` URI.
    public var avatarURL: String?
    /// The body and `formatted_body` start with a fallback naming the person (`<strong data-mx-profile-fallback>`),
    /// which clients that show the profile leave out.
    public var hasFallback: Bool?

    /// The content key (unstable prefix) under which a message carries its profile.
    public static let contentKey = "com.beeper.per_message_profile"

    public init(id: String, displayname: String?, avatarURL: String? = nil, hasFallback: Bool? = nil) {
        self.id = id
        self.displayname = displayname
        self.avatarURL = avatarURL
        self.hasFallback = hasFallback
    }

    enum CodingKeys: String, CodingKey {
        case id, displayname
        case avatarURL = "avatar_url"
        case hasFallback = "has_fallback"
    }
}
