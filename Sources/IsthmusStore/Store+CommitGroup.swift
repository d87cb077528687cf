import IsthmusCommon

/// Group commit (issue 26): the hot path's writes from every room share commits.
///
/// A write through ``groupedWrite(_:)`` that finds no group open starts one (it *leads* it): it opens a transaction,
/// runs its statements, then yields the store's thread once, so that the calls already queued behind it run first.
/// Every grouped write among them joins the open transaction (each in a savepoint) and waits. When the leader runs
/// again it commits once and resumes them all. Under load the store's queue is long and one commit (one fsync, one
/// PostgreSQL round trip) carries the writes of many rooms; alone, a write costs what it did (the leader takes no
/// savepoint). Nobody returns before the commit that holds their writes: what a caller acknowledges is durable.
///
/// Any other write (``write(_:)``) first commits the open group (``finishOpenGroup()``), so the transactions never
/// nest and the order of commits follows the order of calls. Reads run inside the open group and see its writes,
/// which are committed before any of their writers returns.
extension Store {
    /// The writes waiting for one commit. Only touched on the store's thread.
    final class CommitGroup {
        var waiters: [CheckedContinuation<Void, any Error>] = []
        /// Set once, when the group is committed or rolled back.
        var outcome: Result<Void, any Error>?
    }

    /// Runs `body` in the open commit group (or opens one) and returns once the group's commit holds its writes.
    /// A fenced store checks the lease once per group, when it opens. Throws `body`'s error (its writes rolled back,
    /// the group's others unharmed) or the commit's (every write of the group lost).
    func groupedWrite<T: Sendable>(_ body: (Database) throws -> T) async throws -> T {
        if let group = openGroup {
            let result: T
            do {
                result = try database.inSavepoint { try body(database) }
            } catch let broken as CommitGroupBroken {
                database.rollbackGroup()
                end(group, .failure(broken.cause))
                throw broken.cause
            }
            try await withCheckedThrowingContinuation { group.waiters.append($0) }
            return result
        }
        let group = CommitGroup()
        try database.beginGroup()
        let result: T
        do {
            if let fence { try LeaseTable.checkFence(fence, in: database) }
            result = try body(database)
        } catch {
            database.rollbackGroup()
            if error is LeaseLostError { fenceRefusals += 1 }
            throw error
        }
        openGroup = group
        await Task.yield()  // back of the store's queue: the writes queued meanwhile join this commit
        if openGroup === group { commit(group) }
        try group.outcome!.get()
        return result
    }

    /// Commits the open group, if any, before a write outside it. On the store's thread; blocks on I/O.
    func finishOpenGroup() {
        if let group = openGroup { commit(group) }
    }

    private func commit(_ group: CommitGroup) {
        do {
            try database.commitGroup()
            end(group, .success(()))
        } catch {
            logger.error("A group commit failed", metadata: [
                "store.location": "\(location)", "store.group.writes": "\(group.waiters.count + 1)",
                "error": "\(error)",
            ])
            end(group, .failure(error))
        }
    }

    /// Records the group's outcome and resumes its waiting writers with it.
    private func end(_ group: CommitGroup, _ outcome: Result<Void, any Error>) {
        if openGroup === group { openGroup = nil }
        group.outcome = outcome
        let waiters = group.waiters
        group.waiters = []
        for waiter in waiters { waiter.resume(with: outcome) }
    }
}
