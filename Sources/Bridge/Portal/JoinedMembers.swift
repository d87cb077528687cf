import IsthmusCommon

/// A Matrix room's joined members as one `/joined_members` answer gives them: per-room displaynames and avatars.
///
/// One request serves both, so an activation asks the homeserver once. A dictionary literal gives displaynames only
/// (`[alice: "Alice", bot: nil]`), which is what most tests need.
public struct JoinedMembers: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// Every joined member, with its per-room displayname when it has one.
    public var displayNames: [UserID: String?]
    /// The members that have an avatar (a valid `mxc://`), by user.
    public var avatars: [UserID: MXCURI]

    public init(displayNames: [UserID: String?], avatars: [UserID: MXCURI] = [:]) {
        self.displayNames = displayNames
        self.avatars = avatars
    }

    public init(dictionaryLiteral elements: (UserID, String?)...) {
        self.init(displayNames: Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
