/// What `migrate-store` copied (or, in a dry run, would copy): rows per table, in copy order.
public struct StoreCopyReport: Sendable, Equatable {
    /// One table's rows.
    public struct Table: Sendable, Equatable {
        public var name: String
        public var rows: Int
        /// An order-independent checksum of the table's rows (the wrapping sum of a 64-bit FNV-1a hash of each
        /// row's values), equal on source and target after a copy; nil in a dry run.
        public var checksum: UInt64?

        public init(name: String, rows: Int, checksum: UInt64?) {
            self.name = name
            self.rows = rows
            self.checksum = checksum
        }

        /// The checksum as 16 hex digits ("-" in a dry run).
        public var checksumHex: String { StoreCopyError.hex(checksum) }
    }

    public var tables: [Table]
    /// The last migration both databases have (they must have the same ones).
    public var schemaVersion: Int
    /// Nothing was written: the counts are the source's, the target was only checked.
    public var dryRun: Bool

    /// All rows of all tables.
    public var totalRows: Int { tables.reduce(0) { $0 + $1.rows } }
}

/// Why `migrate-store` refused or failed. Messages name databases by their redacted description, never a password.
public enum StoreCopyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which of the two databases.
    public enum Side: String, Sendable {
        case source
        case target
    }

    /// The SQLite source file does not exist (opening it would create an empty one).
    case sourceMissing(path: String)
    /// Another process (`serve`, or another command) has the SQLite file open.
    case inUse(Side, path: String, pid: Int32)
    /// Source and target are the same database.
    case sameDatabase
    /// The database could not be opened or migrated (unreachable server, bad credentials, a newer schema…).
    case cannotOpen(Side, location: String, reason: String)
    /// The target already holds bridge rows (table → rows); nothing was written to it.
    case targetNotEmpty([String: Int])
    /// The two databases do not have the same migrations applied.
    case schemaMismatch(source: [Int], target: [Int])
    /// A table this version does not know how to copy (a newer schema, or someone else's table).
    case unknownTable(Side, name: String)
    /// A table's columns differ between the two databases.
    case columnsDiffer(table: String, source: [String], target: [String])
    /// A sequence-filled column the copy does not know about (it could not move the sequence past the copied rows).
    case undeclaredSequence(table: String, column: String)
    /// The copy failed part-way; the target transaction was rolled back, so the target is as it was.
    case copyFailed(table: String, reason: String)
    /// After the commit the target's rows differ from the source's (count or checksum).
    case verificationFailed(table: String, source: StoreCopyReport.Table, target: StoreCopyReport.Table)

    public var description: String {
        switch self {
        case .sourceMissing(let path):
            "the source database \(path) does not exist"
        case .inUse(let side, let path, let pid):
            "the \(side.rawValue) database \(path) is open in another process (pid \(pid)): stop isthmus serve first"
        case .sameDatabase:
            "the source and the target are the same database"
        case .cannotOpen(let side, let location, let reason):
            "cannot open the \(side.rawValue) database \(location): \(reason)"
        case .targetNotEmpty(let rows):
            "the target database is not empty ("
                + rows.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value) rows" }.joined(separator: ", ")
                + "); migrate-store only copies into a new database"
        case .schemaMismatch(let source, let target):
            "the databases have different migrations (source \(Self.versions(source)), target \(Self.versions(target)))"
        case .unknownTable(let side, let name):
            "the \(side.rawValue) database has a table this version cannot copy: \(name)"
        case .columnsDiffer(let table, let source, let target):
            "table \(table) has different columns: source (\(source.joined(separator: ", "))), target (\(target.joined(separator: ", ")))"
        case .undeclaredSequence(let table, let column):
            "table \(table) has a sequence on \(column) that migrate-store does not know"
        case .copyFailed(let table, let reason):
            "copying table \(table) failed, the target was rolled back: \(reason)"
        case .verificationFailed(let table, let source, let target):
            "after the copy, table \(table) differs: source \(source.rows) rows (checksum \(Self.hex(source.checksum))), "
                + "target \(target.rows) rows (checksum \(Self.hex(target.checksum))); empty the target before trying again"
        }
    }

    private static func versions(_ list: [Int]) -> String {
        list.isEmpty ? "none" : list.map(String.init).joined(separator: ",")
    }

    static func hex(_ checksum: UInt64?) -> String {
        guard let checksum else { return "-" }
        let digits = String(checksum, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
