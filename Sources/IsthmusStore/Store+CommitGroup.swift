import IsthmusCommon

/// Group commit (issue 26): the hot path's writes from every room share commits.
///
/// A write through ``groupedWrite(_:)`` joins the open group, or opens one and *leads* it: it yields the store's
/// thread once, so that the calls already queued behind it run first, and every grouped write among them adds its
/// statements to the group and waits. When the leader runs again it runs all of them in one transaction, in the order
/// they came, commits once and resumes each writer with its own result. Under load the store's queue is long and one
/// commit (one fsync, one PostgreSQL round trip) carries the writes of many rooms; alone, a write costs what it did.
/// Nobody returns before the commit that holds their writes: what a caller acknowledges is durable.
///
/// A write whose statements fail is taken out and the transaction runs again without it (PostgreSQL aborts the whole
/// transaction on any error; savepoints would cost a round trip per write): only its writer sees the error. The
/// bodies only read and write the database, so running one twice is safe. An unreachable database or a full disk fails
/// the whole group at once, as does a failed commit.
///
/// The statements run when the group commits, not when they join it: a read meanwhile does not see them, and their
/// writers have not returned yet either. Any other write (``write(_:)``) first commits the open group
/// (``finishOpenGroup()``), so transactions never nest and commits keep the order of the calls.
///
/// On PostgreSQL, a group whose writes all gave their statements up front (``groupedWrite(planned:)``: the hot path's
/// records, map rows, receipts and inbox rows) is sent in one round trip: `BEGIN`, every statement and `COMMIT`
/// together (``Database/pipelinedTransaction(_:)``). A fenced store (an active/standby pair) does not pipeline yet: its
/// lease check must pass before the writes run, and it is a read whose answer the client checks.
extension Store {
    /// The most writes one commit carries. A group holds SQLite's write lock (the CLI beside `serve` waits) or, with a
    /// lease, PostgreSQL's share lock on the lease row (its renewal waits) for as long as its statements run: a full
    /// group commits at once and the next write opens another.
    static let maximumGroupSize = 256

    /// The writes waiting for one commit. Only touched on the store's thread.
    final class CommitGroup {
        var members: [Member] = []
    }

    /// One write of a group: its statements, run in the group's transaction, and how its writer learns the outcome.
    struct Member {
        /// Runs the statements; the result is kept for the writer until ``finish`` (a retry overwrites it).
        let run: (Database) throws -> Void
        /// A planned write's statements, and what keeps the writer's result from theirs (nil: not planned).
        var plan: Plan?
        /// Resumes the writer: with its kept result, or with `error` when the group failed.
        let finish: (_ error: (any Error)?) -> Void
    }

    /// A planned member's statements, and what keeps its writer's result from their results.
    struct Plan {
        let statements: [PlannedStatement]
        let take: ([PlannedResult]) -> Void
    }

    /// Runs `body` in the open commit group (or opens one) and returns its result once the group's commit holds its
    /// writes. A fenced store checks the lease in each group's transaction. Throws `body`'s error (only its own writes
    /// are lost) or the group's (an unreachable database, a full disk, a failed commit: every write of it is lost).
    @discardableResult
    func groupedWrite<T: Sendable>(_ body: @escaping (Database) throws -> T) async throws -> T {
        var result: T?
        return try await join(run: { database in result = try body(database) }, plan: nil) { result! }
    }

    /// ``groupedWrite(_:)`` of a write given as statements up front: on PostgreSQL, groups made only of these go in
    /// one round trip. The same result either way.
    @discardableResult
    func groupedWrite<T: Sendable>(planned write: PlannedWrite<T>) async throws -> T {
        var result: T?
        return try await join(run: { database in result = try database.perform(write) },
                              plan: Plan(statements: write.statements, take: { results in result = write.result(results) })) { result! }
    }

    /// Adds a write to the open group (or opens one and leads it) and returns `result()` once the group committed.
    private func join<T>(run: @escaping (Database) throws -> Void, plan: Plan?, result: () -> T) async throws -> T {
        if let full = openGroup, full.members.count >= Self.maximumGroupSize { commit(full) }
        if let group = openGroup {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                group.members.append(Member(run: run, plan: plan, finish: { error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                }))
            }
            return result()
        }
        let group = CommitGroup()
        var outcome: (any Error)??
        group.members.append(Member(run: run, plan: plan, finish: { error in outcome = .some(error) }))
        openGroup = group
        // To the back of the store's queue, so the writes queued meanwhile join this group. (Since Swift 6.2 a yield
        // re-enqueues on the current executor, the store's own; before, it went through the global pool and back.)
        await Task.yield()
        if openGroup === group { commit(group) }
        guard let outcome else { preconditionFailure("a commit group ended without its leader") }
        if let error = outcome { throw error }
        return result()
    }

    /// Commits the open group, if any, before a write outside it. On the store's thread; blocks on I/O.
    func finishOpenGroup() {
        if let group = openGroup { commit(group) }
    }

    /// Runs the group's members in one transaction and commits; a member whose statements fail is resumed with its
    /// error and the rest run again without it.
    private func commit(_ group: CommitGroup) {
        openGroup = nil
        var members = group.members
        while !members.isEmpty {
            if fence == nil, database.canPipeline, members.allSatisfy({ $0.plan != nil }) {
                if commitPipelined(&members) { return }
                continue
            }
            var failed: (index: Int, error: any Error)?
            do {
                try write { database in
                    failed = nil   // PostgreSQL may run this body twice (a serialization failure's retry)
                    for (index, member) in members.enumerated() {
                        do { try member.run(database) } catch {
                            failed = (index, error)
                            throw error
                        }
                    }
                }
                for member in members { member.finish(nil) }
                return
            } catch {
                if let (index, memberError) = failed, !Self.failsEveryWrite(memberError) {
                    members.remove(at: index).finish(memberError)
                    continue
                }
                fail(members, error)
                return
            }
        }
    }

    /// Commits planned members in one round trip. Returns false when one member's statement failed: it is resumed
    /// with its error and taken out, and the rest must run again; true when every member has been resumed.
    private func commitPipelined(_ members: inout [Member]) -> Bool {
        let plans = members.map { $0.plan! }
        do {
            switch try database.pipelinedTransaction(plans.flatMap(\.statements)) {
            case .committed(let results):
                var rest = results[...]
                for (member, plan) in zip(members, plans) {
                    plan.take(Array(rest.prefix(plan.statements.count)))
                    rest = rest.dropFirst(plan.statements.count)
                    member.finish(nil)
                }
                return true
            case .failed(let index, let error):
                // Whose statement it was: the members' statements went in order.
                var owner = 0
                var end = plans[0].statements.count
                while index >= end, owner + 1 < plans.count {
                    owner += 1
                    end += plans[owner].statements.count
                }
                if !Self.failsEveryWrite(error) {
                    members.remove(at: owner).finish(error)
                    return false
                }
                fail(members, error)
                return true
            }
        } catch {
            fail(members, error)
            return true
        }
    }

    /// Resumes every member with the group's error.
    private func fail(_ members: [Member], _ error: any Error) {
        if members.count > 1 {
            logger.error("A group commit failed", metadata: [
                "store.location": "\(location)", "store.group.writes": "\(members.count)", "error": "\(error)",
            ])
        }
        for member in members { member.finish(error) }
    }

    /// Whether a failure is the database's rather than one write's: the others would fail the same way.
    private static func failsEveryWrite(_ error: any Error) -> Bool {
        guard let error = error as? StoreError else { return error is LeaseLostError }
        return error.kind == .unavailable || error.kind == .diskFull
    }
}
