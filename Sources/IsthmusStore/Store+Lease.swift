extension Store {
    /// Takes the bridge lease for `owner` for `ttl` (by the database's clock) when nobody holds it, it has expired,
    /// or `owner` holds it already; nil when another owner holds it. Does I/O on the lease's own thread and connection
    /// (``LeaseChannel``; the store's for an in-memory SQLite database).
    ///
    /// Not fenced: taking the lease is what a standby does before it may write. PostgreSQL: it waits at most
    /// ``LeaseTable/acquireLockTimeout`` for the row (which every fenced write of the holder locks `FOR SHARE`), then
    /// answers nil ("not this time"): a holder that died inside a transaction must not block the standby's poll until
    /// the server ends that session.
    public nonisolated func tryAcquireLease(owner: LeaseOwner, ttl: Duration) async throws -> LeaseGrant? {
        do {
            return try await leaseTransaction { db in
                let ms = LeaseTable.milliseconds(ttl)
                let sql = LeaseTable.statements(db.dialect)
                if db.dialect == .postgres { try db.execute(LeaseTable.acquireLockTimeout) }
                guard try db.run(sql.acquire, owner, owner, ms, owner) == 1 else { return nil }
                return try db.query(sql.selectGrant, owner) { row in
                    LeaseGrant(owner: owner, epoch: Int64(row.int(0) ?? 0), expiresMs: Int64(row.int(1) ?? 0))
                }.first
            }
        } catch let error as StoreError where error.sqlState == LeaseTable.lockNotAvailable {
            return nil
        }
    }

    /// Extends `grant` by `ttl` from now (the database's clock); false when it is no longer ours or has already
    /// expired (then someone else may hold it: stop acting). Does I/O on the lease's own thread and connection
    /// (``LeaseChannel``), so it never queues behind the store's writes.
    public nonisolated func renewLease(_ grant: LeaseGrant, ttl: Duration) async throws -> Bool {
        try await leaseTransaction { db in
            try db.run(LeaseTable.statements(db.dialect).renew, LeaseTable.milliseconds(ttl), grant.owner, grant.epoch) == 1
        }
    }

    /// Ends `grant` now, so a standby takes over on its next poll instead of waiting for the expiry. The store stays
    /// fenced with it: any later write is refused. Does I/O on the lease's own thread (``LeaseChannel``).
    public nonisolated func releaseLease(_ grant: LeaseGrant) async throws {
        try await leaseTransaction { db in _ = try db.run(LeaseTable.statements(db.dialect).release, grant.owner, grant.epoch) }
    }

    /// Runs `body` in a transaction on the lease's own connection and thread (``LeaseChannel``), or on the store's
    /// (unfenced: the lease's statements carry their own conditions) for an in-memory SQLite database.
    private nonisolated func leaseTransaction<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        if let channel = try leaseChannels.channel() { return try await channel.transaction(body) }
        return try await writeUnfenced(body)
    }

    /// The lease row now (for `doctor` and the log). Does I/O on the store's thread.
    public func currentLease() throws -> LeaseState {
        try read { db in
            try db.query(LeaseTable.statements(db.dialect).select) { row in
                LeaseState(owner: row.id(0), epoch: Int64(row.int(1) ?? 0), expiresMs: Int64(row.int(2) ?? 0),
                           databaseNowMs: Int64(row.int(3) ?? 0))
            }.first ?? LeaseState(owner: nil, epoch: 0, expiresMs: 0, databaseNowMs: 0)
        }
    }

    /// From now on every write transaction first checks, inside the transaction, that `grant` is still the live
    /// lease, and is rolled back with ``LeaseLostError`` when it is not: a paused old leader can never write after
    /// losing the lease. Call once, right after acquiring it.
    public func fence(with grant: LeaseGrant) {
        fence = grant
    }

    /// Whether a write was refused by the fence since ``fence(with:)``: the lease is gone, stop acting at once.
    public var fenceTripped: Bool { fenceRefusals > 0 }
}
