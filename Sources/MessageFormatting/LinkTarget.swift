import IsthmusCommon

/// What an `<a href>` in a Matrix `formatted_body` points at, for the XEP-0393 writer.
///
/// Matrix client-server API, "Appendices › Identifier Grammar" and "Matrix URI scheme"/"matrix.to navigation": a
/// user pill is `https://matrix.to/#/@user:server` (or `matrix:u/user:server`); rooms, aliases and events use the same
/// forms with `!`, `#` and `$`. Pure.
enum LinkTarget: Equatable {
    /// A user pill: its visible text is replaced by the user's nick, and the user is mentioned.
    case user(UserID)
    /// Any other matrix.to / `matrix:` link, or a target that carries a Matrix id or an `mxc://` URI: only the
    /// visible text may be shown (the target would leak Matrix ids into XMPP).
    case matrixOnly
    /// Anything else: the target may be shown as text beside the link text.
    case external(String)

    init(href: String) {
        let trimmed = href.trimmingHTMLWhitespace()
        let decoded = PercentDecoding.decode(trimmed)
        let lowered = decoded.lowercased()
        for prefix in ["https://matrix.to/#/", "http://matrix.to/#/"] where trimmed.lowercased().hasPrefix(prefix) {
            // A user id may hold `/` (ghosts of XMPP occupants carry base64 occupant-ids), raw or as `%2F`: a user
            // pill's id runs to the query. Other identifiers (`!room/$event`) are split at `/` before decoding.
            let raw = trimmed.dropFirst(prefix.count)
            let first = PercentDecoding.decode(String(raw.prefix { $0 != "?" && $0 != "/" }))
            if first.hasPrefix("@") {
                let identifier = PercentDecoding.decode(String(raw.prefix { $0 != "?" }))
                self = UserID(identifier).map(LinkTarget.user) ?? .matrixOnly
            } else {
                self = .matrixOnly
            }
            return
        }
        if lowered.hasPrefix("matrix:") {
            let path = decoded.dropFirst("matrix:".count).prefix { $0 != "?" && $0 != "#" }
            if path.hasPrefix("u/"), let user = UserID("@" + path.dropFirst(2)) {
                self = .user(user)
            } else {
                self = .matrixOnly
            }
            return
        }
        if lowered.hasPrefix("mxc:") || LinkTarget.containsMatrixIdentifier(decoded) || trimmed.isEmpty {
            self = .matrixOnly
            return
        }
        self = .external(trimmed)
    }

    /// Whether `text` holds something shaped like a Matrix id: a sigil `@ ! # +` followed by a localpart, `:` and a
    /// server name character, or `$` followed by 20 or more base64 characters (an event id of room version 3+).
    /// Deliberately broad: a false positive only hides a link target, a false negative would leak an id.
    static func containsMatrixIdentifier(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            switch scalar {
            case "@", "!", "#", "+":
                var cursor = index + 1
                while cursor < scalars.count, isLocalpartCharacter(scalars[cursor]) { cursor += 1 }
                if cursor > index + 1, cursor + 1 < scalars.count, scalars[cursor] == ":",
                   isServerCharacter(scalars[cursor + 1]) {
                    return true
                }
            case "$":
                var cursor = index + 1
                while cursor < scalars.count, isBase64Character(scalars[cursor]) { cursor += 1 }
                if cursor - index - 1 >= 20 { return true }
            default:
                continue
            }
        }
        return false
    }

    private static func isLocalpartCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value > 0x20 && scalar.value < 0x7F && scalar != ":" && scalar != "/" && scalar != "?" && scalar != "#"
            && scalar != "@" && scalar != "&"
    }

    private static func isServerCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "["
    }

    private static func isBase64Character(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
            || scalar == "+" || scalar == "/" || scalar == "-" || scalar == "_"
    }
}
