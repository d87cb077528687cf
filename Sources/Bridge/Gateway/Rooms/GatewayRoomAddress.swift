import IsthmusCommon

/// The MUC address of a Matrix room on the component: `#<alias-localpart>%<server>@<component_domain>` for the alias
/// `#<alias-localpart>:<server>` — e.g. `#matrix%matrix.org@bridge.example.org` for `#matrix:matrix.org`. XEP-0106
/// escapes stand for what a JID localpart cannot hold (`\40` for `@`, `\20` for a space …). Pure.
///
/// JID localparts fold case, Matrix aliases do not: the address names the alias in lower case, and the gateway finds
/// the alias's real spelling in its alias table (``GatewayRooms``) when the lower-case one is unknown. Puppet JIDs never
/// look like this: theirs always hold an escaped `:` (`\3a`), which an address never does.
public struct GatewayRoomAddress: Sendable, Hashable {
    /// The room's bare JID on the component.
    public let jid: JID
    /// The alias it names, as the (lower-case) address spells it.
    public let alias: RoomAlias

    /// The address `jid` is (any resource ignored); nil when it is not one on `componentDomain`.
    public init?(_ jid: JID, componentDomain: String) {
        guard jid.domain == componentDomain, let localpart = jid.localpart, localpart.hasPrefix("#"),
              !localpart.lowercased().contains("\\3a"), let separator = localpart.lastIndex(of: "%") else { return nil }
        let name = localpart[localpart.index(after: localpart.startIndex)..<separator]
        let server = localpart[localpart.index(after: separator)...]
        guard !name.isEmpty, !server.isEmpty,
              let alias = RoomAlias("#" + BridgeNaming.unescapeJIDLocalpart(String(name)) + ":" + String(server)) else { return nil }
        self.jid = jid.bare
        self.alias = alias
    }

    /// The address of `alias` on `componentDomain` (naming it in lower case); nil when it makes no valid JID.
    public init?(alias: RoomAlias, componentDomain: String) {
        let localpart = "#" + BridgeNaming.escapeJIDLocalpart(alias.localpart) + "%" + alias.server
        guard let jid = JID(localpart: localpart, domain: componentDomain) else { return nil }
        self.init(jid, componentDomain: componentDomain)
    }

    /// The occupant JID of `nick` in this room.
    public func occupant(_ nick: String) -> JID? { jid.with(resource: nick) }
}
