import IsthmusCommon

/// What `isthmus doctor` reports about the store: which backend, that it answers (PostgreSQL: the server's
/// version), and which migrations are applied — read without migrating or creating anything.
public struct StoreDiagnosis: Sendable, Equatable {
    /// Which backend the store is on.
    public var backend: DatabaseBackend
    /// PostgreSQL's `server_version`; SQLite's library version.
    public var serverVersion: String
    /// The migrations recorded in the database, in order (empty: a new, empty database).
    public var applied: [Int]
    /// The migrations this binary knows, in order.
    public var known: [Int]

    /// Recorded migrations this binary does not know (a newer version migrated the database).
    public var unknown: [Int] { applied.filter { !known.contains($0) } }
    /// Known migrations `serve` still has to apply.
    public var pending: [Int] { known.filter { !applied.contains($0) } }
}

extension Store {
    /// Connects to the database at `location` and reads its state without changing it. Blocks on I/O (the caller's
    /// thread). A SQLite file must exist already (the caller checks: opening would create it).
    /// - Throws: ``StoreError`` (``StoreError/Kind/unavailable`` when PostgreSQL cannot be reached).
    public static func diagnose(_ location: DatabaseLocation) throws -> StoreDiagnosis {
        let database: Database
        switch location {
        case .sqlite(let path):
            do { database = Database(.sqlite(try SQLiteConnection(path: path))) } catch { throw StoreError(error) }
        case .postgres(let url, _):
            database = Database(.postgres(PostgresPool(url: url.rawValue, size: 1)))
        }
        let (versionSQL, historySQL) = switch database.dialect {
        case .sqlite: ("SELECT sqlite_version()", "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
        case .postgres: ("SHOW server_version", "SELECT COUNT(*) FROM pg_tables WHERE tablename = 'schema_migrations' AND schemaname = current_schema()")
        }
        let version = try database.query(versionSQL) { $0.string(0) }.first.flatMap { $0 } ?? "?"
        let hasHistory = (try database.query(historySQL) { $0.int(0) ?? 0 }.first ?? 0) > 0
        let applied = hasHistory ? try database.query("SELECT version FROM schema_migrations ORDER BY version") { $0.int(0) ?? 0 } : []
        return StoreDiagnosis(backend: location.backend, serverVersion: version, applied: applied,
                              known: Migrations.all.map(\.version).sorted())
    }
}
