/// The bridge's Matrix users: the bot `@<botLocalpart>:<server>` and one ghost `@<prefix><encoded>:<server>` per
/// identity the bridge core chooses (a bare JID, or a room JID plus an occupant key). Pure value.
///
/// Short form: `prefix + GhostLocalpartCodec.encode(identity)` — round-trips through ``identity(of:)``.
/// When the user id would exceed 255 bytes (spec appendices §4.2 "User identifiers"), the long form is used:
/// a readable head of the escaped identity, `==`, then 32 hex digits of SHA-256(identity). `==` never occurs in the
/// short form, so the two cannot collide; the long form is not reversible — the core keeps ghost ↔ identity in its store.
public struct GhostNamespace: Sendable, Equatable {
    /// Localpart prefix of every ghost, e.g. `_xmpp_`.
    public let prefix: String
    /// The homeserver's domain.
    public let serverName: String
    /// Localpart of the bridge bot.
    public let botLocalpart: String

    /// Maximum length of a user id in bytes.
    public static let maximumUserIDLength = 255
    private static let hashMarker = "=="
    private static let hashDigits = 32

    /// Fails when the prefix is not made of lower-case localpart characters (or holds `==`), or when not even the long form
    /// of a ghost id would fit in 255 bytes with this server name.
    public init?(prefix: String, serverName: String, botLocalpart: String) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789._=-/+")   // the spec's localpart characters (v1.8 added `+`)
        guard !prefix.isEmpty, prefix.allSatisfy(allowed.contains), !prefix.contains("==") else { return nil }
        guard UserID(localpart: botLocalpart, server: serverName) != nil else { return nil }
        let overhead = 2 + prefix.utf8.count + serverName.utf8.count
        guard overhead + Self.hashMarker.utf8.count + Self.hashDigits <= Self.maximumUserIDLength else { return nil }
        self.prefix = prefix
        self.serverName = serverName
        self.botLocalpart = botLocalpart
    }

    /// The bot's user id.
    public var botUserID: UserID { UserID(localpart: botLocalpart, server: serverName)! }

    /// The ghost for `identity`: the short, reversible form when it fits, else the hashed long form.
    public func userID(for identity: String) -> UserID {
        let escaped = GhostLocalpartCodec.encode(identity)
        let overhead = 2 + prefix.utf8.count + serverName.utf8.count
        if overhead + escaped.utf8.count <= Self.maximumUserIDLength {
            return UserID(localpart: prefix + escaped, server: serverName)!
        }
        let budget = Self.maximumUserIDLength - overhead - Self.hashMarker.utf8.count - Self.hashDigits
        let head = Self.head(of: escaped, maxBytes: budget)
        let hash = Digest.hex(Digest.sha256(Array(identity.utf8))).prefix(Self.hashDigits)
        return UserID(localpart: prefix + head + Self.hashMarker + hash, server: serverName)!
    }

    /// The identity a short-form ghost id stands for; nil for the long form, the bot and users that are not ours.
    public func identity(of user: UserID) -> String? {
        guard let encoded = ghostLocalpartSuffix(user), !encoded.contains(Self.hashMarker) else { return nil }
        return GhostLocalpartCodec.decode(encoded)
    }

    /// Whether `user` is one of our ghosts (short or long form), not the bot.
    public func isGhost(_ user: UserID) -> Bool {
        guard let encoded = ghostLocalpartSuffix(user) else { return false }
        if let marker = encoded.firstRange(of: Self.hashMarker) {
            let hash = encoded[marker.upperBound...]
            // The head may end inside a multi-byte character (it is cut at a byte budget): its escapes must be
            // canonical, its bytes need not be UTF-8 (found by fuzzing: such ghosts were not recognised as ours).
            return hash.utf8.count == Self.hashDigits && hash.allSatisfy(\.isHexDigit)
                && GhostLocalpartCodec.decodeBytes(encoded[..<marker.lowerBound]) != nil
        }
        return GhostLocalpartCodec.decode(encoded) != nil
    }

    /// Whether `user` is the bridge bot.
    public func isBot(_ user: UserID) -> Bool { user == botUserID }

    /// Whether `user` belongs to the bridge (the bot or a ghost): its events are echoes, not to be bridged back.
    public func isOurs(_ user: UserID) -> Bool { isBot(user) || isGhost(user) }

    private func ghostLocalpartSuffix(_ user: UserID) -> Substring? {
        guard user.server == serverName, user != botUserID else { return nil }
        let localpart = user.localpart
        guard localpart.hasPrefix(prefix), localpart.utf8.count > prefix.utf8.count else { return nil }
        return Substring(localpart.dropFirst(prefix.count))
    }

    /// The longest prefix of `escaped` within `maxBytes` that does not cut an escape (`_x`, `=xx`) in two.
    private static func head(of escaped: String, maxBytes: Int) -> String {
        let bytes = Array(escaped.utf8)
        var end = 0, index = 0
        while index < bytes.count {
            let width = bytes[index] == UInt8(ascii: "_") ? 2 : bytes[index] == UInt8(ascii: "=") ? 3 : 1
            guard index + width <= maxBytes else { break }
            index += width
            end = index
        }
        return String(decoding: bytes[..<end], as: UTF8.self)
    }
}
