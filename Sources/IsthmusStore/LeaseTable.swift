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

    /// The lease's statements in one dialect. The only difference is the database's clock and the fence's row lock.
    struct Statements {
        let acquire: String
        let selectGrant: String
        let renew: String
        let release: String
        let select: String
        let fenceCheck: String

        init(_ dialect: SQLDialect) {
            let now = LeaseTable.nowMs(dialect)
            // Takes the row when it is free, expired or already the owner's; bumps the epoch unless it is the owner's and live.
            // A lease that expires further ahead than any TTL could put it (the database's clock stepped back since it
            // was granted) counts as expired too, or the pair would stand without an active process until the clock
            // caught up again.
            acquire = """
                UPDATE bridge_lease
                SET epoch = CASE WHEN owner = ? AND expires_ms > \(now) THEN epoch ELSE epoch + 1 END,
                    owner = ?, expires_ms = \(now) + ?
                WHERE id = 1 AND (owner IS NULL OR owner = ? OR expires_ms <= \(now)
                                  OR expires_ms > \(now) + \(LeaseTable.maxTTLMs))
                """
            selectGrant = "SELECT epoch, expires_ms FROM bridge_lease WHERE id = 1 AND owner = ?"
            // Extends a live lease of this owner and epoch; a lapsed one is not revived (someone may have taken it).
            renew = """
                UPDATE bridge_lease SET expires_ms = \(now) + ?
                WHERE id = 1 AND owner = ? AND epoch = ? AND expires_ms > \(now)
                """
            // Ends the lease now (the owner stays, for `doctor`): a standby can take it on its next poll.
            release = "UPDATE bridge_lease SET expires_ms = \(now) WHERE id = 1 AND owner = ? AND epoch = ?"
            select = "SELECT owner, epoch, expires_ms, \(now) FROM bridge_lease WHERE id = 1"
            // The fence, first in every write transaction of a fenced store. SQLite: `BEGIN IMMEDIATE` already holds the
            // write lock, so a taker's UPDATE waits for our commit. PostgreSQL: `FOR SHARE` makes it wait the same way
            // (READ COMMITTED would otherwise let the row change under the rest of our transaction).
            fenceCheck = "SELECT 1 FROM bridge_lease WHERE id = 1 AND owner = ? AND epoch = ? AND expires_ms > \(now)"
                + (dialect == .postgres ? " FOR SHARE" : "")
        }
    }

    /// PostgreSQL, first in the acquire's transaction: wait at most 1 s for the lease row. A live holder's fenced write
    /// keeps it for milliseconds; a dead one's until `idle_in_transaction_session_timeout` (``PostgresConnection``).
    static let acquireLockTimeout = "SET LOCAL lock_timeout = '1s'"
    /// `55P03` lock_not_available: the acquire's lock timeout passed.
    static let lockNotAvailable = "55P03"

    /// The longest TTL a grant can have (`ha.lease_ttl_seconds` is at most 3600), in milliseconds: a lease expiring
    /// later than this from now was granted by a clock that has since stepped back.
    static let maxTTLMs: Int64 = 3_600_000

    static let sqlite = Statements(.sqlite)
    static let postgres = Statements(.postgres)

    /// The statements for `dialect` (built once).
    static func statements(_ dialect: SQLDialect) -> Statements {
        switch dialect {
        case .sqlite: sqlite
        case .postgres: postgres
        }
    }

    /// The database's clock in milliseconds since 1970, as an SQL expression: the one per-dialect fragment of the
    /// lease. SQLite: `julianday('now')` (millisecond precision). PostgreSQL: `clock_timestamp()`, not `now()`, which is
    /// frozen at the start of the transaction.
    static func nowMs(_ dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite: "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
        case .postgres: "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint"
        }
    }

    /// Milliseconds of a duration, rounded down.
    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// Throws ``LeaseLostError`` unless `grant` is still the live lease. Inside the caller's write transaction.
    static func checkFence(_ grant: LeaseGrant, in db: Database) throws {
        let live = try db.query(statements(db.dialect).fenceCheck, grant.owner, grant.epoch) { _ in true }
        guard !live.isEmpty else { throw LeaseLostError(grant: grant) }
    }
}
