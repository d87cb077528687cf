import IsthmusCommon
#if canImport(Glibc)
import Glibc
#endif

/// `isthmus migrate-store`: copies every bridge table from one database to another (SQLite → PostgreSQL, or back),
/// exactly, while `serve` is stopped. Runs on the caller's thread and blocks it (file and network I/O) — a one-shot
/// command with nothing else to do.
///
/// Both databases are opened as `serve` would open them (applying this binary's migrations), and must then have the
/// same migrations. The source is read in one read transaction (a consistent snapshot); the target is written in one
/// transaction, in ``StoreCopyTable/all``'s order, `batch` rows at a time (keyset pagination on the primary key, so no
/// table is ever held in memory whole). Sequences are moved past the source's high-water mark. After the commit the
/// target is read again and each table's row count and checksum compared with the source's.
public enum StoreCopy {
    /// Copies `source` into `target` (or, `dryRun`, checks both and counts the source's rows). `progress` is called
    /// after each table is copied (inside the target's transaction, before the commit).
    /// - Throws: ``StoreCopyError``; the target is unchanged unless the error is ``StoreCopyError/verificationFailed``.
    public static func run(from source: DatabaseLocation, to target: DatabaseLocation, dryRun: Bool = false,
                           logger: Logger = .disabled,
                           progress: (StoreCopyReport.Table) -> Void = { _ in }) throws(StoreCopyError) -> StoreCopyReport {
        guard !isSameDatabase(source, target) else { throw .sameDatabase }
        let sourceDB = try open(source, as: .source, logger: logger)
        let targetDB = try open(target, as: .target, logger: logger)
        let plan = try StoreCopyPlan(source: sourceDB, target: targetDB)
        let copied: [StoreCopyReport.Table]
        do {
            copied = try sourceDB.transaction {
                try plan.beginSnapshot()
                let counts = try plan.tables.map { try plan.count($0.table, in: sourceDB) }
                if dryRun {
                    try plan.refuseNonEmptyTarget()
                    return zip(plan.tables, counts).map { StoreCopyReport.Table(name: $0.table.name, rows: $1, checksum: nil) }
                }
                return try targetDB.transaction {
                    try plan.refuseNonEmptyTarget()  // inside the transaction that writes
                    var tables: [StoreCopyReport.Table] = []
                    for (table, expected) in zip(plan.tables, counts) {
                        let copied = try plan.copy(table)
                        guard copied.rows == expected else {
                            throw StoreCopyError.copyFailed(table: table.table.name, reason: "read \(copied.rows) rows "
                                                            + "of the \(expected) the table holds")
                        }
                        progress(copied)
                        tables.append(copied)
                    }
                    return tables
                }
            }
        } catch let error as StoreCopyError {
            throw error
        } catch let error as StoreCopyPlan.TableFailure {
            throw .copyFailed(table: error.table, reason: "\(error.underlying)")
        } catch {
            throw .copyFailed(table: "-", reason: "\(error)")
        }
        let report = StoreCopyReport(tables: copied, schemaVersion: plan.schemaVersion, dryRun: dryRun)
        if dryRun { return report }
        for (planned, expected) in zip(plan.tables, copied) {
            let found: StoreCopyReport.Table
            do {
                found = try plan.checksum(planned, in: targetDB)
            } catch {
                throw .copyFailed(table: expected.name, reason: "the copy was committed but could not be read back: \(error)")
            }
            guard found == expected else { throw .verificationFailed(table: expected.name, source: expected, target: found) }
        }
        logger.info("Copied the store", metadata: [
            "store.source": "\(source)", "store.target": "\(target)", "store.rows": "\(report.totalRows)",
        ])
        return report
    }

    /// Opens `location` as `serve` would (applying migrations), after checking that a SQLite file exists (a source)
    /// and that no other process has it open.
    static func open(_ location: DatabaseLocation, as side: StoreCopyError.Side,
                     logger: Logger) throws(StoreCopyError) -> Database {
        let database: Database
        switch location {
        case .sqlite(let path):
            if side == .source && access(path, F_OK) != 0 { throw .sourceMissing(path: path) }
            if let pid = SQLiteFileLock.otherProcess(path: path) { throw .inUse(side, path: path, pid: pid) }
            do {
                database = Database(.sqlite(try SQLiteConnection(path: path)), logger: logger)
            } catch {
                throw .cannotOpen(side, location: location.description, reason: "\(error)")
            }
        case .postgres(let url, _):
            database = Database(.postgres(PostgresPool(url: url.rawValue, size: 1, logger: logger)), logger: logger)
        }
        do {
            _ = try Migrations.apply(Migrations.all, to: database)
        } catch {
            throw .cannotOpen(side, location: location.description, reason: "\(error)")
        }
        return database
    }

    /// The same SQLite file (by path; a symlink is not followed) or the same PostgreSQL URL.
    static func isSameDatabase(_ a: DatabaseLocation, _ b: DatabaseLocation) -> Bool {
        switch (a, b) {
        case (.sqlite(let left), .sqlite(let right)): left == right
        case (.postgres(let left, _), .postgres(let right, _)): left == right
        default: false
        }
    }
}
