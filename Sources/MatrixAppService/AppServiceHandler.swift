import IsthmusCommon
import Matrix

/// What the bridge core does with what the homeserver pushes. Implemented by the core (and by fakes in tests);
/// called by ``AppServiceListener`` from its own tasks, never from libmicrohttpd's thread.
public protocol AppServiceHandler: Sendable {
    /// Takes a new transaction: records its durable effects **and** `transaction.id` as processed in the ``Store``, in
    /// one commit (e.g. ``Store/enqueueInbox(_:markingProcessed:)``, or ``Store/markTransactionProcessed(_:)`` alone
    /// when nothing in it is kept), so the homeserver can never have a transaction replayed whose effects are already
    /// recorded. Return only once that commit is durable (the listener then answers 200); throw, with nothing recorded,
    /// to have the homeserver retry it later (answered 500). Transactions are handed over one at a time, in the order
    /// they arrive. One whose id the store holds already is handed over again only when it carries a message event
    /// the store has never seen (a homeserver reusing ids after a restart, see `TransactionProcessor`): `handle` must
    /// then drop what it queued or bridged before.
    func handle(_ transaction: Transaction) async throws

    /// `GET /users/{userId}`: whether `user` (in our namespace) exists — create it first if it should (appservice
    /// API §2.3.3 "Querying"). Runs concurrently with ``handle(_:)``.
    func userExists(_ user: UserID) async -> Bool

    /// `GET /rooms/{alias}`: whether `alias` exists — create the room and alias first if it should.
    /// Runs concurrently with ``handle(_:)`` (the core may be waiting on a join that caused this query).
    func roomAliasExists(_ alias: RoomAlias) async -> Bool

    /// `POST /ping` arrived from the homeserver (appservice API §2.3.4). Default: nothing.
    func pinged(transactionID: String?) async
}

extension AppServiceHandler {
    public func pinged(transactionID: String?) async {}
}
