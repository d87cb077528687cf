import IsthmusMetrics

/// The gateway's metrics: `isthmus_gateway_alias_queries_total{outcome}` (each homeserver alias query and what came of
/// it), `isthmus_gateway_dynamic_rooms` (dynamic links that exist) and `isthmus_gateway_occupants` (XMPP users in
/// Matrix rooms through the component). Thread-safe.
public final class GatewayMetrics: Sendable {
    private let queries: CounterFamily
    private let rooms: Gauge
    private let occupants: Gauge

    init(registry: MetricsRegistry) {
        queries = registry.counter("isthmus_gateway_alias_queries_total",
                                   help: "Gateway alias queries from the homeserver, by outcome (opened, bound, or why refused).",
                                   labels: ["outcome"])
        rooms = registry.gauge("isthmus_gateway_dynamic_rooms", help: "Links the gateway opened on demand (kind dynamic).").labels()
        occupants = registry.gauge("isthmus_gateway_occupants",
                                   help: "XMPP users in Matrix rooms through the component (gateway.xmpp_rooms).").labels()
        for outcome in ["opened", "bound"] { _ = queries.labels(outcome) }
    }

    /// An alias query ended with `outcome` (a fixed vocabulary: ``DynamicPortals/Outcome/label``).
    func aliasQueried(_ outcome: String) { queries.labels(outcome).increment() }

    /// How many XMPP users are in hosted rooms now.
    func setGatewayOccupants(_ count: Int) { occupants.set(Double(count)) }

    /// How many dynamic links exist now.
    func setDynamicRooms(_ count: Int) { rooms.set(Double(count)) }
}
