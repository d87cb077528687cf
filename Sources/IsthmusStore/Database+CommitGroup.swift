import IsthmusCommon

/// The statements of a commit group (``Store``'s group commit, issue 26): one transaction that several calls' writes
/// join, each inside its own savepoint, committed once for all of them.
///
/// Why savepoints: a call whose statements fail must take back only its own writes, not the others' (on PostgreSQL any
/// failed statement aborts the whole transaction unless it is rolled back to a savepoint). The first call of a group
/// needs none: when it fails, nothing else is in the transaction yet, and the whole of it is rolled back.
/// Savepoints are not released one by one (a round trip each on PostgreSQL); the commit releases them all, and
/// `ROLLBACK TO` a name used several times goes back to the most recent one, which is the failing call's.
extension Database {
    /// Opens the group's transaction: SQLite `BEGIN IMMEDIATE`, PostgreSQL `BEGIN` on a connection kept (pinned) until
    /// ``commitGroup()`` or ``rollbackGroup()``. Blocks on I/O.
    func beginGroup() throws(StoreError) {
        switch backend {
        case .sqlite(let connection):
            do { try connection.execute("BEGIN IMMEDIATE") } catch { throw StoreError(error) }
        case .postgres(let pool):
            precondition(pinned == nil, "a commit group inside a transaction")
            let connection: PostgresConnection
            do { connection = try pool.checkOut() } catch { throw StoreError(error) }
            do {
                try connection.execute("BEGIN")
            } catch {
                pool.checkIn(connection)
                throw StoreError(error)
            }
            pinned = connection
        }
    }

    /// Runs a later call's `body` inside the open group, in a savepoint: when it throws, its own writes are rolled back
    /// and its error rethrown, and the group goes on. Throws ``CommitGroupBroken`` when even the rollback failed (the
    /// connection is gone): the whole group must then be rolled back.
    func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        do { try groupStatement("SAVEPOINT isthmus_group") } catch { throw CommitGroupBroken(cause: error) }
        do {
            return try body()
        } catch {
            do { try groupStatement("ROLLBACK TO SAVEPOINT isthmus_group") } catch { throw CommitGroupBroken(cause: error) }
            throw error
        }
    }

    /// Commits the group (its savepoints with it) and lets its connection go; when the commit fails, the group is rolled
    /// back (nothing of it is kept) and the error thrown. Blocks on I/O (the fsync).
    func commitGroup() throws(StoreError) {
        do {
            try groupStatement("COMMIT")
        } catch {
            rollbackGroup()
            throw error
        }
        unpinGroup()
        activity.committed()
    }

    /// Rolls the whole group back (best effort: a broken connection has rolled it back already) and lets its
    /// connection go.
    func rollbackGroup() {
        defer { unpinGroup() }
        switch backend {
        case .sqlite(let connection): try? connection.execute("ROLLBACK")
        case .postgres: try? pinned?.execute("ROLLBACK")
        }
    }

    private func groupStatement(_ sql: String) throws(StoreError) {
        switch backend {
        case .sqlite(let connection):
            do { try connection.execute(sql) } catch { throw StoreError(error) }
        case .postgres:
            guard let pinned else { preconditionFailure("no open commit group") }
            do { try pinned.execute(sql) } catch { throw StoreError(error) }
        }
    }

    private func unpinGroup() {
        guard case .postgres(let pool) = backend, let connection = pinned else { return }
        pinned = nil
        pool.checkIn(connection)
    }
}

/// A commit group could not roll one call back to its savepoint (the connection broke): every write of the group is
/// lost and each of its calls fails with `cause`.
struct CommitGroupBroken: Error {
    let cause: StoreError
}
