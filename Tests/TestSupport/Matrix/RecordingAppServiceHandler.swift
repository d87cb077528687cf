import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixAppService
import Synchronization

/// An ``AppServiceHandler`` for tests: records every transaction, query and ping; can be told to fail the next
/// transactions or to hold them in ``handle(_:)`` until released. Thread-safe.
///
/// Like the bridge's handler, it records each transaction it takes as processed in the store it was given with
/// ``use(_:)``, as the ``AppServiceHandler`` contract requires, with its events queued in the inbox in the same commit,
/// and answers ``isProcessed(_:)`` and ``seenMessages(_:in:)`` from that store.
public final class RecordingAppServiceHandler: AppServiceHandler {
    private struct State {
        var transactions: [Transaction] = []
        var pings: [String?] = []
        var userQueries: [UserID] = []
        var aliasQueries: [RoomAlias] = []
        var store: Store?
        var failuresLeft = 0
        var concurrent = 0
        var maxConcurrent = 0
        var holding = false
        var held: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    /// Users the handler says exist.
    public let knownUsers: Set<UserID>
    /// Aliases the handler says exist.
    public let knownAliases: Set<RoomAlias>
    /// How long `handle` takes (to provoke overlapping requests).
    public let handleDelay: Duration

    public init(knownUsers: Set<UserID> = [], knownAliases: Set<RoomAlias> = [], handleDelay: Duration = .zero) {
        self.knownUsers = knownUsers
        self.knownAliases = knownAliases
        self.handleDelay = handleDelay
    }

    public struct InjectedFailure: Error {}
    /// The store was needed before ``use(_:)``.
    public struct NoStore: Error {}

    /// Records the transactions this handler takes as processed in `store`, and reads them back from it.
    public func use(_ store: Store) { state.withLock { $0.store = store } }

    /// Makes the next `count` transactions throw.
    public func failNext(_ count: Int) { state.withLock { $0.failuresLeft = count } }

    /// From now on, transactions wait in ``handle(_:)`` until ``releaseTransactions()`` (to act while one is in it).
    public func holdTransactions() { state.withLock { $0.holding = true } }

    /// Lets held and later transactions through.
    public func releaseTransactions() {
        let held = state.withLock { state in
            state.holding = false
            defer { state.held = [] }
            return state.held
        }
        for transaction in held { transaction.resume() }
    }

    /// Transactions in ``handle(_:)`` right now.
    public var transactionsInHandler: Int { state.withLock { $0.concurrent } }

    public var transactions: [Transaction] { state.withLock { $0.transactions } }
    public var events: [ClientEvent] { transactions.flatMap(\.events) }
    public var pings: [String?] { state.withLock { $0.pings } }
    public var userQueries: [UserID] { state.withLock { $0.userQueries } }
    public var aliasQueries: [RoomAlias] { state.withLock { $0.aliasQueries } }
    /// The most transactions ever in `handle` at once.
    public var maxConcurrentTransactions: Int { state.withLock { $0.maxConcurrent } }

    public func handle(_ transaction: Transaction) async throws {
        let fail = state.withLock { state in
            state.concurrent += 1
            state.maxConcurrent = max(state.maxConcurrent, state.concurrent)
            if state.failuresLeft > 0 {
                state.failuresLeft -= 1
                return true
            }
            return false
        }
        defer { state.withLock { $0.concurrent -= 1 } }
        await withCheckedContinuation { continuation in
            let hold = state.withLock { state in
                if state.holding { state.held.append(continuation) }
                return state.holding
            }
            if !hold { continuation.resume() }
        }
        if handleDelay > .zero { try await Task.sleep(for: handleDelay) }
        if fail { throw InjectedFailure() }
        let store = try store()
        // As the bridge does: the events go to the inbox in the commit that records the transaction.
        let rows = transaction.events.map { ($0.roomID, $0.eventID, Array("{}".utf8)) }
        _ = try await store.enqueueInbox(rows, markingProcessed: transaction.id)
        state.withLock { $0.transactions.append(transaction) }
    }

    public func isProcessed(_ id: TransactionID) async throws -> Bool {
        try await store().isTransactionProcessed(id)
    }

    public func seenMessages(_ events: [EventID], in room: RoomID) async throws -> Set<EventID> {
        try await store().seenMatrixEvents(room, among: events)
    }

    private func store() throws(NoStore) -> Store {
        guard let store = state.withLock({ $0.store }) else { throw NoStore() }
        return store
    }

    public func userExists(_ user: UserID) async -> Bool {
        state.withLock { $0.userQueries.append(user) }
        return knownUsers.contains(user)
    }

    public func roomAliasExists(_ alias: RoomAlias) async -> Bool {
        state.withLock { $0.aliasQueries.append(alias) }
        return knownAliases.contains(alias)
    }

    public func pinged(transactionID: String?) async {
        state.withLock { $0.pings.append(transactionID) }
    }

    /// Waits until an event matching `predicate` was handled, or fails after `timeout`.
    public func waitForEvent(timeout: Duration = .seconds(10), where predicate: (ClientEvent) -> Bool) async throws -> ClientEvent {
        try await eventuallyValue("an event in a transaction", timeout: Double(timeout.components.seconds)) {
            events.first(where: predicate)
        }
    }
}
