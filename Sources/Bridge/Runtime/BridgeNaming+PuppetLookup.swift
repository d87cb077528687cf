import IsthmusCommon

extension BridgeNaming {
    /// The Matrix user whose puppet JID `jid` is (bare or full), read back from its XEP-0106-escaped localpart and
    /// checked by deriving the JID again; nil for anything else (our own occupant, a folded-case id with its digest,
    /// which only the puppet table can name). Pure.
    public func matrixUser(forPuppet jid: JID) -> UserID? {
        guard isOurs(jid), let localpart = jid.localpart,
              let user = UserID("@" + Self.unescapeJIDLocalpart(localpart)),
              puppetJID(for: user)?.bare == jid.bare else { return nil }
        return user
    }

    /// XEP-0106 unescaping: the inverse of ``escapeJIDLocalpart(_:)``.
    static func unescapeJIDLocalpart(_ text: String) -> String {
        let table: [String: String] = ["20": " ", "22": "\"", "26": "&", "27": "'", "2f": "/", "3a": ":", "3c": "<", "3e": ">",
                                       "40": "@", "5c": "\\"]
        var result = ""
        var rest = Substring(text)
        while let slash = rest.firstIndex(of: "\\") {
            result += rest[..<slash]
            let code = rest[rest.index(after: slash)...].prefix(2)
            if let character = table[code.lowercased()] {
                result += character
                rest = rest[rest.index(slash, offsetBy: 3)...]
            } else {
                result += "\\"
                rest = rest[rest.index(after: slash)...]
            }
        }
        return result + rest
    }
}
