import IsthmusCommon

/// How the bridge names things on each side: our occupants' JIDs, nicks, origin-ids and Matrix txnIds. Pure.
///
/// Every name is derived deterministically so a restart reuses the same JIDs, nicks and ids (same origin-id for a
/// resent message, same Matrix txnId for a re-bridged stanza), which is what makes delivery idempotent.
public struct BridgeNaming: Sendable {
    /// How the bridge is on the XMPP server.
    public enum Identity: Sendable, Equatable {
        /// A XEP-0114 component: every Matrix user has an occupant (a puppet) under its domain.
        case component
        /// An ordinary account (client mode): its one occupant relays the Matrix users; it has no puppets.
        case account
    }

    public let identity: Identity
    /// The component's domain (our occupants live under it); in client mode the account's domain.
    public let componentDomain: String
    /// The nick of the bridge's own occupant.
    public let botNick: String
    /// The bridge's own occupant's real JID (`isthmus@<component>/isthmus`): the one copy of room traffic we act on.
    ///
    /// It has a localpart so that it is not the component's domain JID: ejabberd looks an occupant's affiliation up by
    /// bare JID and then by domain, so an owner affiliation of the domain would make every Matrix user's occupant an
    /// owner too. No puppet can have this localpart: every puppet's holds the escaped `:` of its user id (`\3a`).
    public let botOccupant: JID
    /// The component's bare domain JID: the bridge's occupant in earlier versions, and so the owner of the rooms it
    /// created then, until it hands them over (`RolesMachine+Ownership.swift`).
    public let componentJID: JID
    /// The localpart of ``botOccupant``.
    public static let botLocalpart = "isthmus"
    /// Suffix used for the first alternative nick after a conflict: `Name (Matrix)`.
    public let conflictSuffix = "Matrix"

    public init?(componentDomain: String, botNick: String) {
        guard let bot = JID(localpart: BridgeNaming.botLocalpart, domain: componentDomain, resource: "isthmus"),
              let component = JID(localpart: nil, domain: componentDomain, resource: nil) else { return nil }
        self.identity = .component
        self.componentDomain = componentDomain
        self.botNick = botNick
        self.botOccupant = bot
        self.componentJID = component
    }

    /// Client mode: the bridge's occupant is `account` (a full JID: the resource it binds), the only JID that is ours.
    public init?(account: JID, botNick: String) {
        guard account.resource != nil, account.localpart != nil else { return nil }
        identity = .account
        componentDomain = account.domain
        self.botNick = botNick
        botOccupant = account
        componentJID = account.bare
    }

    /// The real JID of a Matrix user's occupants: the user id without `@`, XEP-0106-escaped, under the component.
    /// `@alice:example.org` → `alice\3aexample.org@component/isthmus`.
    ///
    /// JID localparts fold case (``JID`` lowercases them) but Matrix ids do not: `@Bob:x` and `@bob:x` are two users.
    /// When folding changes the escaped id, `#` and 12 hex digits of SHA-256(user id) are appended, so two users never
    /// share an occupant (found by fuzzing). Ids without upper-case letters keep the plain form.
    /// nil in client mode: an account has no puppets.
    public func puppetJID(for user: UserID) -> JID? {
        guard identity == .component else { return nil }
        let escaped = BridgeNaming.escapeJIDLocalpart(String(user.rawValue.dropFirst()))
        guard let jid = JID(localpart: escaped, domain: componentDomain, resource: "isthmus") else { return nil }
        if jid.localpart == escaped { return jid }
        let digest = Digest.hex(Digest.sha256(Array(user.rawValue.utf8)).prefix(6))
        return JID(localpart: escaped + "#" + digest, domain: componentDomain, resource: "isthmus")
    }

    /// Whether `jid` is under our component domain; in client mode, whether it is the account.
    public func isOurs(_ jid: JID) -> Bool {
        switch identity {
        case .component: jid.domain == componentDomain
        case .account: jid.bare == botOccupant.bare
        }
    }

    /// The origin-id for the XMPP copy of a Matrix event: stable, so a resend carries the same one.
    public func originID(for event: EventID) -> OriginID {
        OriginID("isthmus-" + Digest.hex(Digest.sha256(Array(event.rawValue.utf8)).prefix(16)))!
    }

    /// The Matrix txnId for bridging a room's stanza: unique per room across all ghosts (Synapse scopes txnIds
    /// per appservice and room), stable across restarts.
    public func matrixTxnID(room: JID, stanzaID: StanzaID) -> ClientTransactionID {
        ClientTransactionID("isthmus." + Digest.hex(Digest.sha256(Array("\(room)\u{0}\(stanzaID.rawValue)".utf8)).prefix(16)))!
    }

    /// The Matrix txnId for a bot notice about `subject` (e.g. a failed delivery of event X).
    public func noticeTxnID(subject: String) -> ClientTransactionID {
        ClientTransactionID("isthmus.notice." + Digest.hex(Digest.sha256(Array(subject.utf8)).prefix(16)))!
    }

    /// The nick to try for a Matrix user after `attempt` conflicts: the name, then `Name (Matrix)`, then numbered.
    public func nick(for displayname: String, attempt: Int) -> String {
        let base = BridgeNaming.sanitizeNick(displayname)
        switch attempt {
        case 0: return base
        case 1: return "\(base) (\(conflictSuffix))"
        default: return "\(base) (\(conflictSuffix) \(attempt))"
        }
    }

    /// A nick XMPP accepts: control characters removed, surrounding spaces trimmed, at most 64 characters, never empty.
    static func sanitizeNick(_ name: String) -> String {
        var cleaned = String(name.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f }.map(Character.init))
        while cleaned.first?.isWhitespace == true { cleaned.removeFirst() }
        while cleaned.last?.isWhitespace == true { cleaned.removeLast() }
        if cleaned.count > 64 { cleaned = String(cleaned.prefix(64)) }
        return cleaned.isEmpty ? "matrix-user" : cleaned
    }

    /// XEP-0106 escaping of the characters a JID localpart may not hold.
    static func escapeJIDLocalpart(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case " ": escaped += "\\20"
            case "\"": escaped += "\\22"
            case "&": escaped += "\\26"
            case "'": escaped += "\\27"
            case "/": escaped += "\\2f"
            case ":": escaped += "\\3a"
            case "<": escaped += "\\3c"
            case ">": escaped += "\\3e"
            case "@": escaped += "\\40"
            case "\\": escaped += "\\5c"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
