import IsthmusCommon

/// What an `<a href>` in a Matrix `formatted_body` points at, for the XEP-0393 writer.
///
/// Matrix client-server API, "Appendices › Identifier Grammar" and "Matrix URI scheme"/"matrix.to navigation": a
/// user pill is `https://matrix.to/#/@user:server` (or `matrix:u/user:server`); rooms, aliases and events use the same
/// forms with `!`, `#` and `$`. Pure.
enum MatrixLink: Equatable {
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
        for prefix in ["https://matrix.to/#/", "http://matrix.to/#/"] where lowered.hasPrefix(prefix) {
            let identifier = decoded.dropFirst(prefix.count).prefix { $0 != "?" && $0 != "/" }
            self = UserID(String(identifier)).map(MatrixLink.user) ?? .matrixOnly
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
        if lowered.hasPrefix("mxc:") || MatrixLink.containsMatrixIdentifier(decoded) || trimmed.isEmpty {
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

/// `%XX` decoding of a URL for inspection only (ill-formed escapes stay as they are; bytes that do not form UTF-8
/// become U+FFFD). Pure.
enum PercentDecoding {
    static func decode(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let input = Array(text.utf8)
        var index = 0
        while index < input.count {
            if input[index] == UInt8(ascii: "%"), index + 2 < input.count,
               let high = hexValue(input[index + 1]), let low = hexValue(input[index + 2]) {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(input[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension String {
    /// Without leading and trailing HTML white space (space, tab, LF, FF, CR).
    func trimmingHTMLWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.isHTMLWhitespace }),
              let last = scalars.lastIndex(where: { !$0.isHTMLWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }
}
