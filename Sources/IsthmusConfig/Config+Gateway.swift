import IsthmusCommon

extension Config {
    /// `gateway:` — rooms opened on demand: a Matrix user joins a MUC by its gateway alias
    /// (`#<ghost_prefix><room>_<muc-domain>:<server_name>`), and the bridge links a new Matrix room with it.
    public struct Gateway: Sendable, Equatable {
        /// `matrix_aliases`: Matrix users open a MUC by joining its alias (default false).
        public var matrixAliases = false
        /// `xmpp_rooms`: XMPP users join Matrix rooms through the component (default false).
        public var xmppRooms = false
        /// `allowed_muc_domains`: MUC services Matrix users may open (nil: any).
        public var allowedMUCDomains: Set<String>?
        /// `allowed_matrix_servers`: homeservers whose rooms XMPP users may join (nil: any).
        public var allowedMatrixServers: Set<String>?
        /// `idle_days`: a dynamic room with no Matrix member for this long is unlinked and closed (default 7).
        public var idleDays = 7
        /// `max_dynamic_rooms`: how many dynamic links may exist at once (default 1000); past it, aliases answer 404.
        public var maxDynamicRooms = 1000
        /// `max_gateway_rooms`: how many Matrix rooms XMPP users may be in through the component at once (default 1000).
        public var maxGatewayRooms = 1000
        /// `max_joins_per_minute`: how many rooms one XMPP user may join through the component in a minute (default 10).
        public var maxJoinsPerMinute = 10
        /// `max_opens_per_minute`: how many new rooms the gateway opens in a minute (default 30): each costs a Matrix
        /// room and a MUC join, so a flood of alias lookups cannot make thousands.
        public var maxOpensPerMinute = 30

        public init() {}
    }

    /// `gateway:` — `matrix_aliases`, `xmpp_rooms`, `allowed_muc_domains`, `allowed_matrix_servers`, `idle_days`,
    /// `max_dynamic_rooms`, `max_gateway_rooms`, `max_joins_per_minute`, `max_opens_per_minute`. Aliases need the application service (an ordinary Matrix account
    /// is never asked about aliases).
    static func decodeGateway(_ reader: inout ConfigReader, matrixMode: MatrixMode, xmppMode: XMPPMode) throws(ConfigError) -> Gateway {
        var gateway = Gateway()
        gateway.matrixAliases = try reader.optionalBool("matrix_aliases") ?? false
        if gateway.matrixAliases && matrixMode == .client {
            throw reader.invalid("matrix_aliases", "needs the application service (matrix.mode: appservice): the homeserver asks only an appservice about aliases")
        }
        gateway.xmppRooms = try reader.optionalBool("xmpp_rooms") ?? false
        if gateway.xmppRooms && (matrixMode == .client || xmppMode == .client) {
            throw reader.invalid("xmpp_rooms", "needs the XMPP component and the application service (xmpp.mode and matrix.mode left out): the component hosts the rooms, ghosts join them")
        }
        if let domains = try reader.optionalDomains("allowed_muc_domains"), !domains.isEmpty {
            gateway.allowedMUCDomains = Set(domains)
        }
        if let servers = try reader.optionalStrings("allowed_matrix_servers"), !servers.isEmpty {
            guard servers.allSatisfy({ !$0.isEmpty && !$0.contains(where: { $0.isWhitespace || $0 == "/" }) }) else {
                throw reader.invalid("allowed_matrix_servers", "every entry must be a server name such as matrix.org")
            }
            gateway.allowedMatrixServers = Set(servers)
        }
        if let days = try reader.optionalInt("idle_days") {
            guard days > 0 else { throw reader.invalid("idle_days", "must be at least 1") }
            gateway.idleDays = days
        }
        if let cap = try reader.optionalInt("max_dynamic_rooms") {
            guard cap >= 0 else { throw reader.invalid("max_dynamic_rooms", "must be 0 or more") }
            gateway.maxDynamicRooms = cap
        }
        if let cap = try reader.optionalInt("max_gateway_rooms") {
            guard cap >= 0 else { throw reader.invalid("max_gateway_rooms", "must be 0 or more") }
            gateway.maxGatewayRooms = cap
        }
        if let rate = try reader.optionalInt("max_joins_per_minute") {
            guard rate > 0 else { throw reader.invalid("max_joins_per_minute", "must be at least 1") }
            gateway.maxJoinsPerMinute = rate
        }
        if let rate = try reader.optionalInt("max_opens_per_minute") {
            guard rate > 0 else { throw reader.invalid("max_opens_per_minute", "must be at least 1") }
            gateway.maxOpensPerMinute = rate
        }
        return gateway
    }
}
