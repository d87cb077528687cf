/// `bridge_lease`: the one row that says which `serve` process of an active/standby pair is active (issue 17,
/// docs/deploy.md). Time is always the database's clock (``nowMs``), so two hosts whose clocks differ agree on
/// when a lease expires. Whoever holds the row may write; a fenced store checks it in every write transaction.
///
/// Prior art: Synapse's cross-worker lock (a row with a random token and an expiry, renewed, on both SQLite and
/// Postgres). A Postgres advisory lock would tie the lease to one session and break behind a transaction pooler.
enum LeaseTable {
    /// Migration 13. The row exists from the start (free: no owner, expired), so every change is an `UPDATE`.
    static let schema = """
        CREATE TABLE bridge_lease (
            id          INTEGER PRIMARY KEY CHECK (id = 1),
            owner       TEXT,
            epoch       BIGINT NOT NULL,
            expires_ms  BIGINT NOT NULL
        );
        INSERT INTO bridge_lease (id, owner, epoch, expires_ms) VALUES (1, NULL, 0, 0);
        """

    /// The database's clock in milliseconds since 1970, as an SQL expression: the one per-dialect fragment of the
    /// lease. SQLite: `julianday('now')` (milliseconds precise). PostgreSQL would be
    /// `(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint` (`clock_timestamp()`, not `now()`, which is frozen at
    /// the start of the transaction).
    static let nowMs = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"

    /// Takes the row when it is free, expired or already `owner`'s; bumps the epoch unless it is `owner`'s and live.
    static let acquire = """
        UPDATE bridge_lease
        SET epoch = CASE WHEN owner = ? AND expires_ms > \(nowMs) THEN epoch ELSE epoch + 1 END,
            owner = ?, expires_ms = \(nowMs) + ?
        WHERE id = 1 AND (owner IS NULL OR owner = ? OR expires_ms <= \(nowMs))
        """
    static let selectGrant = "SELECT epoch, expires_ms FROM bridge_lease WHERE id = 1 AND owner = ?"
    /// Extends a live lease of this owner and epoch; a lapsed one is not revived (someone may have taken it meanwhile).
    static let renew = """
        UPDATE bridge_lease SET expires_ms = \(nowMs) + ?
        WHERE id = 1 AND owner = ? AND epoch = ? AND expires_ms > \(nowMs)
        """
    /// Ends the lease now (the owner stays, for `doctor`): a standby can take it on its next poll.
    static let release = "UPDATE bridge_lease SET expires_ms = \(nowMs) WHERE id = 1 AND owner = ? AND epoch = ?"
    static let select = "SELECT owner, epoch, expires_ms, \(nowMs) FROM bridge_lease WHERE id = 1"
    /// The fence, first in every write transaction of a fenced store. On SQLite, `BEGIN IMMEDIATE` already holds the
    /// write lock, so a taker's `UPDATE` waits for our commit; PostgreSQL adds `FOR SHARE` for the same effect.
    static let fenceCheck = """
        SELECT 1 FROM bridge_lease WHERE id = 1 AND owner = ? AND epoch = ? AND expires_ms > \(nowMs)
        """

    /// Milliseconds of a duration, rounded down.
    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// Throws ``LeaseLostError`` unless `grant` is still the live lease. Inside the caller's write transaction.
    static func checkFence(_ grant: LeaseGrant, in db: SQLiteConnection) throws {
        let live = try db.query(fenceCheck, grant.owner, grant.epoch) { _ in true }
        guard !live.isEmpty else { throw LeaseLostError(grant: grant) }
    }
}
