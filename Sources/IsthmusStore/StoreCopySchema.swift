/// What ``StoreCopyPlan`` reads from each database's catalog, and the per-dialect statements for sequences: the one
/// part of the copy whose SQL differs between SQLite and PostgreSQL. Blocks on I/O.
enum StoreCopySchema {
    /// A column of a table: its name, and whether it stores bytes (SQLite `BLOB`, PostgreSQL `bytea`).
    struct Column: Equatable {
        let name: String
        let isBinary: Bool
    }

    /// The names of the database's tables (PostgreSQL: in the connection's current schema).
    static func tableNames(_ db: Database) throws -> Set<String> {
        let sql = switch db.dialect {
        case .sqlite: "SELECT name FROM sqlite_master WHERE type = 'table'"
        case .postgres: """
            SELECT table_name FROM information_schema.tables
            WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
            """
        }
        return Set(try db.query(sql) { $0.string(0) ?? "" })
    }

    /// The table's columns in their declared order. A table whose ``StoreCopyTable/sequence`` is `rowid` gets it
    /// appended on SQLite, where it is implicit (PostgreSQL declares it as an identity column).
    static func columns(of table: StoreCopyTable, in db: Database) throws -> [Column] {
        var columns: [Column]
        switch db.dialect {
        case .sqlite:
            columns = try db.query("SELECT name, type FROM pragma_table_info(?)", table.name) { row in
                Column(name: row.string(0) ?? "", isBinary: (row.string(1) ?? "").uppercased().contains("BLOB"))
            }
            if table.sequence == "rowid" && !columns.contains(where: { $0.name == "rowid" }) {
                columns.append(Column(name: "rowid", isBinary: false))
            }
        case .postgres:
            columns = try db.query("""
                SELECT column_name, data_type FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position
                """, table.name) { row in
                Column(name: row.string(0) ?? "", isBinary: row.string(1) == "bytea")
            }
        }
        return columns
    }

    /// PostgreSQL's identity columns in the current schema, as (table, column).
    static func postgresIdentityColumns(_ db: Database) throws -> [(table: String, column: String)] {
        try db.query("""
            SELECT table_name, column_name FROM information_schema.columns
            WHERE table_schema = current_schema() AND is_identity = 'YES'
            """) { ($0.string(0) ?? "", $0.string(1) ?? "") }
    }

    /// The highest number the table's sequence has handed out: the column's maximum, or more when rows were deleted
    /// since (SQLite keeps it in `sqlite_sequence` for `AUTOINCREMENT` tables; PostgreSQL in the identity sequence).
    static func highWater(of table: String, column: String, in db: Database) throws -> Int {
        let maximum = try db.query("SELECT MAX(\(column)) FROM \(table)") { $0.int(0) ?? 0 }.first ?? 0
        switch db.dialect {
        case .sqlite:
            guard try tableNames(db).contains("sqlite_sequence") else { return maximum }
            let recorded = try db.query("SELECT seq FROM sqlite_sequence WHERE name = ?", table) { $0.int(0) ?? 0 }.first ?? 0
            return max(maximum, recorded)
        case .postgres:
            guard let sequence = try postgresSequence(of: table, column: column, in: db) else { return maximum }
            // `sequence` comes from pg_get_serial_sequence, already quoted as an identifier.
            let used = try db.query("SELECT last_value, is_called FROM \(sequence)") { row in
                row.int(1) == 1 ? row.int(0) ?? 0 : 0
            }.first ?? 0
            return max(maximum, used)
        }
    }

    /// Makes the next number the table's sequence hands out `highWater + 1` (at least).
    static func moveSequence(of table: String, column: String, past highWater: Int, in db: Database) throws {
        switch db.dialect {
        case .postgres:
            guard let sequence = try postgresSequence(of: table, column: column, in: db) else { return }
            let next = max(highWater, try db.query("SELECT MAX(\(column)) FROM \(table)") { $0.int(0) ?? 0 }.first ?? 0) + 1
            _ = try db.query("SELECT setval(?::regclass, ?, false)", sequence, next) { _ in true }
        case .sqlite:
            // Without AUTOINCREMENT, SQLite takes the next rowid from the column's maximum, which the copy kept.
            let autoincrement = try db.query(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? AND sql LIKE '%AUTOINCREMENT%'", table
            ) { _ in true }
            guard !autoincrement.isEmpty, highWater > 0 else { return }
            try db.run("UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = ?", highWater, table)
            if try db.query("SELECT 1 FROM sqlite_sequence WHERE name = ?", table, map: { _ in true }).isEmpty {
                try db.run("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", table, highWater)
            }
        }
    }

    /// The identity sequence behind `table.column`, or nil when it has none.
    private static func postgresSequence(of table: String, column: String, in db: Database) throws -> String? {
        try db.query("SELECT pg_get_serial_sequence(?, ?)", table, column) { $0.string(0) }.first ?? nil
    }
}
