import IsthmusCommon

/// The gateway aliases of MUCs: `#<ghost_prefix><room>_<muc-domain>:<server_name>`, e.g.
/// `#_xmpp_lounge_conference.example.org:example.org` for `lounge@conference.example.org`. Pure value.
///
/// An alias is split at its **last** `_`: a domain never holds one, a room's localpart may. Both parts are
/// case-folded, as XMPP folds them (RFC 7622), so `#_xmpp_Lounge_Conference.example.org` names the same MUC; the
/// alias itself is kept as asked (Matrix aliases are case-sensitive). A room's localpart goes into the alias as it is:
/// a JID localpart never holds what an alias localpart cannot (`:`, NUL, and — for Synapse's `room_alias_name` —
/// whitespace), so nothing needs escaping.
public struct GatewayAliases: Sendable, Equatable {
    /// The ghosts' localpart prefix, e.g. `_xmpp_`: the registration's exclusive alias namespace.
    public let prefix: String
    /// The homeserver's domain.
    public let serverName: String

    public init(prefix: String, serverName: String) {
        self.prefix = prefix
        self.serverName = serverName
    }

    /// The MUC `alias` names; nil when it is not a gateway alias of this homeserver (another server, another prefix,
    /// no `_` after the prefix, or no valid room JID).
    public func muc(for alias: RoomAlias) -> JID? {
        guard alias.server == serverName else { return nil }
        let localpart = alias.localpart
        guard localpart.utf8.count > prefix.utf8.count,
              localpart.prefix(prefix.count).lowercased() == prefix else { return nil }
        let name = localpart.dropFirst(prefix.count)
        guard let separator = name.lastIndex(of: "_") else { return nil }
        let room = name[..<separator], domain = name[name.index(after: separator)...]
        guard !room.isEmpty, !domain.isEmpty, domain.contains(".") || domain == "localhost" else { return nil }
        return JID(localpart: String(room), domain: String(domain))
    }

    /// The canonical (lower-case) gateway alias of `muc`; nil when it would not be a valid alias (over 255 bytes).
    public func alias(for muc: JID) -> RoomAlias? {
        guard let room = muc.localpart else { return nil }
        return RoomAlias("#\(prefix)\(room)_\(muc.domain):\(serverName)")
    }
}
