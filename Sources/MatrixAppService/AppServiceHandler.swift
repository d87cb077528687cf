import IsthmusCommon
import Matrix

/// What the bridge core does with what the homeserver pushes. Implemented by the core (and by fakes in tests);
/// called by ``AppServiceListener`` from its own tasks, never from libmicrohttpd's thread.
public protocol AppServiceHandler: Sendable {
    /// Takes a new transaction: records its durable effects **and** `transaction.id` as processed, in one commit, so
    /// the homeserver can never have a transaction replayed whose effects are already recorded. Return only once that
    /// commit is durable (the listener then answers 200); throw, with nothing recorded, to have the homeserver retry it
    /// later (answered 500). Transactions are handed over one at a time, in the order they arrive, and only when
    /// ``isProcessed(_:)`` is false or ``seenMessages(_:in:)`` misses one of their messages (a homeserver reusing ids
    /// after a restart): `handle` must then drop what it queued or bridged before.
    func handle(_ transaction: Transaction) async throws

    /// Whether an earlier ``handle(_:)`` recorded `id` as processed (then the listener answers 200 without handling
    /// it again). Throw when that cannot be read (answered 500).
    func isProcessed(_ id: TransactionID) async throws -> Bool

    /// Of `events`, message events of `room` in a transaction whose id ``isProcessed(_:)``, those the core already
    /// kept (queued or bridged). One missing means the homeserver reused the id for new events. Throw when that
    /// cannot be read (answered 500).
    func seenMessages(_ events: [EventID], in room: RoomID) async throws -> Set<EventID>

    /// `GET /users/{userId}`: whether `user` (in our namespace) exists — create it first if it should (appservice
    /// API §2.3.3 "Querying"). Runs concurrently with ``handle(_:)``.
    func userExists(_ user: UserID) async -> Bool

    /// `GET /rooms/{alias}`: whether `alias` exists — create the room and alias first if it should.
    /// Runs concurrently with ``handle(_:)`` (the core may be waiting on a join that caused this query).
    func roomAliasExists(_ alias: RoomAlias) async -> Bool

    /// `POST /ping` arrived from the homeserver (appservice API §2.3.4). Default: nothing.
    func pinged(transactionID: String?) async

    /// `GET /thirdparty/protocol/{name}`: the protocol's description; nil → 404. Default: nil.
    func thirdPartyProtocol(_ name: String) async -> ThirdPartyProtocol?

    /// `GET /thirdparty/location/{name}?…` (with `name`) or `GET /thirdparty/location?alias=…` (without): the places
    /// `fields` (the decoded query parameters) name; empty → 404. Default: none.
    func thirdPartyLocations(protocol name: String?, fields: [String: String]) async -> [ThirdPartyLocation]
}

extension AppServiceHandler {
    public func pinged(transactionID: String?) async {}
    public func thirdPartyProtocol(_ name: String) async -> ThirdPartyProtocol? { nil }
    public func thirdPartyLocations(protocol name: String?, fields: [String: String]) async -> [ThirdPartyLocation] { [] }
}
