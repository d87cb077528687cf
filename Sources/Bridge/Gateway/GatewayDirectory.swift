import IsthmusCommon
import IsthmusConfig
import Matrix

/// The gateway in the homeserver's third-party lookups (appservice API §2.3.5): protocol `xmpp`, whose locations are
/// MUCs (field `muc`, a room JID) and whose answers are their gateway aliases — so a client's "explore other networks"
/// finds `#_xmpp_lounge_conference.example.org:example.org` from `lounge@conference.example.org`, and back. Pure.
public struct GatewayDirectory: Sendable {
    /// The protocol's name in the registration (`protocols: [xmpp]`).
    public static let protocolName = "xmpp"
    /// The location field: a MUC's address.
    public static let mucField = "muc"

    public let aliases: GatewayAliases
    public let settings: Config.Gateway

    public init(aliases: GatewayAliases, settings: Config.Gateway) {
        self.aliases = aliases
        self.settings = settings
    }

    /// The protocol's description; nil for another protocol.
    public func protocolDescription(_ name: String) -> ThirdPartyProtocol? {
        guard name == Self.protocolName else { return nil }
        return ThirdPartyProtocol(
            userFields: [], locationFields: [Self.mucField],
            fieldTypes: [Self.mucField: .init(regexp: "[^@/\\s]+@[^@/\\s]+", placeholder: "room@conference.example.org")],
            instances: [.init(desc: "XMPP", networkID: Self.protocolName)])
    }

    /// The locations a lookup names: by protocol and `muc` field, or (no protocol) by `alias`. Empty when nothing
    /// matches, the MUC's service is not allowed, or the fields are not a room JID / gateway alias. The MUC itself is
    /// not asked: the alias opens it (or answers 404) when someone joins.
    public func locations(protocol name: String?, fields: [String: String]) -> [ThirdPartyLocation] {
        let muc: JID?
        switch name {
        case Self.protocolName?:
            muc = fields[Self.mucField].flatMap(JID.init).map(\.bare)
        case nil:
            muc = fields["alias"].flatMap(RoomAlias.init).flatMap(aliases.muc(for:))
        default:
            return []
        }
        guard let muc, muc.localpart != nil, settings.allowedMUCDomains?.contains(muc.domain) ?? true,
              let alias = aliases.alias(for: muc) else { return [] }
        return [ThirdPartyLocation(alias: alias, protocol: Self.protocolName, fields: [Self.mucField: muc.description])]
    }
}
