import IsthmusCommon

/// How a Matrix user's message reads in the MUC when the bridge's one occupant relays it (client mode):
/// `relay.xmpp_format` and `relay.xmpp_emote_format`, with `{name}` the sender's per-room displayname (else the
/// localpart, never a Matrix id) and `{text}` the message. Pure.
public struct RelayFormat: Sendable, Equatable {
    public static let defaultMessage = "<{name}> {text}"
    public static let defaultEmote = "* {name} {text}"

    /// The template of a message (`m.text`, `m.notice`, a caption).
    public var message: String
    /// The template of an emote (`/me waves`; `{text}` is then `waves`).
    public var emote: String

    public init(message: String = RelayFormat.defaultMessage, emote: String = RelayFormat.defaultEmote) {
        self.message = message
        self.emote = emote
    }

    /// The placeholders a template may hold; `{text}` must be one of them.
    public static let placeholders = ["{name}", "{text}"]

    /// The relay's body for `text` (an emote when it starts with `/me `, as the rich translation writes one) by `name`.
    public func render(name: String, text: String) -> String {
        if text.hasPrefix("/me ") { return Self.fill(emote, name: name, text: String(text.dropFirst(4))) }
        return Self.fill(message, name: name, text: text)
    }

    /// The template with its placeholders replaced in one pass, so a name that holds `{text}` stays as it is.
    /// `namePlaceholder`: `{name}` here, `{nick}` in the Matrix relay's template.
    static func fill(_ template: String, name: String, text: String, namePlaceholder: String = "{name}") -> String {
        var result = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            result += rest[..<open]
            let tail = rest[open...]
            if tail.hasPrefix(namePlaceholder) {
                result += name
                rest = tail.dropFirst(namePlaceholder.count)
            } else if tail.hasPrefix("{text}") {
                result += text
                rest = tail.dropFirst(6)
            } else {
                result.append("{")
                rest = tail.dropFirst()
            }
        }
        return result + rest
    }

    /// What `user` is called in the relay's messages: their displayname in the room (else the localpart), without
    /// control characters; members who share it are told apart by a number in the order of their user ids
    /// (`Ann`, `Ann (2)`), so each keeps theirs while the others stay.
    static func name(of user: UserID, displaynames: [UserID: String]) -> String {
        let base = displayName(user, displaynames)
        let namesakes = displaynames.keys.filter { $0 != user && displayName($0, displaynames) == base && $0.rawValue < user.rawValue }
        return namesakes.isEmpty ? base : "\(base) (\(namesakes.count + 1))"
    }

    private static func displayName(_ user: UserID, _ displaynames: [UserID: String]) -> String {
        let raw = displaynames[user].flatMap { $0.isEmpty ? nil : $0 } ?? user.localpart
        var cleaned = String(String.UnicodeScalarView(raw.unicodeScalars.filter { $0.value >= 0x20 && !(0x7f...0x9f).contains($0.value) }))
        while cleaned.first?.isWhitespace == true { cleaned.removeFirst() }
        while cleaned.last?.isWhitespace == true { cleaned.removeLast() }
        return cleaned.isEmpty ? user.localpart : cleaned
    }
}
