/// How ``StoreCopy`` moves each table between two opened databases: the columns both have, read in pages by key,
/// inserted many rows per statement, checksummed. Blocks on I/O (both databases' connections).
struct StoreCopyPlan {
    /// One table with what was found in the two databases.
    struct PlannedTable {
        let table: StoreCopyTable
        /// Column names, sorted (`rowid` among them when SQLite keeps it implicit).
        let columns: [String]
        /// Per column: the target stores bytes (BLOB/bytea), so text read from the source is written as bytes.
        let binaryInTarget: [Bool]
        /// Where the key's columns are in ``columns``.
        let keyIndexes: [Int]
    }

    /// A failure while reading or writing one table.
    struct TableFailure: Error {
        let table: String
        let underlying: any Error
    }

    let source: Database
    let target: Database
    let tables: [PlannedTable]
    /// The last migration (both have the same).
    let schemaVersion: Int

    /// Most parameters one `INSERT` binds (SQLite allows 32,766 since 3.32, PostgreSQL 65,535).
    static let maxParameters = 10_000
    /// Most rows one `INSERT` carries.
    static let maxRowsPerInsert = 100

    /// Checks that the two databases have the same migrations, no table this version does not know, the same columns
    /// in every table, and (PostgreSQL) no identity column the copy would not reset.
    init(source: Database, target: Database) throws(StoreCopyError) {
        self.source = source
        self.target = target
        let sourceVersions: [Int]
        let targetVersions: [Int]
        do {
            sourceVersions = try source.query("SELECT version FROM schema_migrations ORDER BY version") { $0.int(0) ?? 0 }
            targetVersions = try target.query("SELECT version FROM schema_migrations ORDER BY version") { $0.int(0) ?? 0 }
        } catch {
            throw .copyFailed(table: "schema_migrations", reason: "\(error)")
        }
        guard sourceVersions == targetVersions else { throw .schemaMismatch(source: sourceVersions, target: targetVersions) }
        schemaVersion = sourceVersions.last ?? 0
        let known = Set(StoreCopyTable.all.map(\.name))
        for (side, db) in [(StoreCopyError.Side.source, source), (.target, target)] {
            let names = try Self.catalog("tables", db) { try StoreCopySchema.tableNames(db) }
            if let unknown = names.subtracting(known).subtracting(StoreCopyTable.notCopied).sorted().first {
                throw .unknownTable(side, name: unknown)
            }
            if let missing = known.subtracting(names).sorted().first {
                throw .columnsDiffer(table: missing, source: [], target: [])
            }
        }
        var planned: [PlannedTable] = []
        for table in StoreCopyTable.all {
            let sourceColumns = try Self.catalog(table.name, source) { try StoreCopySchema.columns(of: table, in: source) }
            let targetColumns = try Self.catalog(table.name, target) { try StoreCopySchema.columns(of: table, in: target) }
            let binary = Dictionary(targetColumns.map { ($0.name, $0.isBinary) }, uniquingKeysWith: { $1 })
            guard Set(sourceColumns.map(\.name)) == Set(binary.keys), sourceColumns.count == targetColumns.count else {
                throw .columnsDiffer(table: table.name, source: sourceColumns.map(\.name), target: targetColumns.map(\.name))
            }
            // By name: the same order on both sides whatever order migrations added the columns in (the checksum
            // hashes each row's values in this order).
            let names = sourceColumns.map(\.name).sorted()
            let keyIndexes = table.key.compactMap { names.firstIndex(of: $0) }
            guard keyIndexes.count == table.key.count else {
                throw .columnsDiffer(table: table.name, source: names, target: targetColumns.map(\.name))
            }
            planned.append(PlannedTable(table: table, columns: names, binaryInTarget: names.map { binary[$0] ?? false },
                                        keyIndexes: keyIndexes))
        }
        tables = planned
        if target.dialect == .postgres {
            let declared = Set(StoreCopyTable.all.compactMap { table in table.sequence.map { "\(table.name).\($0)" } })
            let identities = try Self.catalog("identity columns", target) { try StoreCopySchema.postgresIdentityColumns(target) }
            for identity in identities where known.contains(identity.table) && !declared.contains("\(identity.table).\(identity.column)") {
                throw .undeclaredSequence(table: identity.table, column: identity.column)
            }
        }
    }

    private static func catalog<T>(_ what: String, _ db: Database, _ body: () throws -> T) throws(StoreCopyError) -> T {
        do { return try body() } catch { throw .copyFailed(table: what, reason: "reading the catalog failed: \(error)") }
    }

    /// Makes the source's transaction a snapshot (PostgreSQL: REPEATABLE READ, read-only; SQLite's `BEGIN IMMEDIATE`
    /// already reads one consistent state and keeps writers out). The first statement of the transaction.
    func beginSnapshot() throws {
        guard source.dialect == .postgres else { return }
        try source.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
    }

    /// `COUNT(*)` of `table` in `db`.
    func count(_ table: StoreCopyTable, in db: Database) throws -> Int {
        try failing(table.name) {
            try db.query("SELECT COUNT(*) FROM \(table.name)") { $0.int(0) ?? 0 }.first ?? 0
        }
    }

    /// Throws ``StoreCopyError/targetNotEmpty(_:)`` when any bridge table of the target has rows (seeded singletons
    /// aside).
    func refuseNonEmptyTarget() throws {
        var rows: [String: Int] = [:]
        for planned in tables where !planned.table.seeded {
            let count = try count(planned.table, in: target)
            if count > 0 { rows[planned.table.name] = count }
        }
        guard rows.isEmpty else { throw StoreCopyError.targetNotEmpty(rows) }
    }

    /// Copies one table inside the target's open transaction and moves its sequence; returns the rows copied and
    /// their checksum.
    func copy(_ planned: PlannedTable) throws -> StoreCopyReport.Table {
        let name = planned.table.name
        return try failing(name) {
            if planned.table.seeded { try target.run("DELETE FROM \(name)") }
            let perInsert = max(1, min(Self.maxRowsPerInsert, Self.maxParameters / planned.columns.count))
            var rows = 0
            var checksum: UInt64 = 0
            try forEachBatch(planned, in: source) { batch in
                var start = 0
                while start < batch.count {
                    let chunk = batch[start..<min(start + perInsert, batch.count)]
                    try insert(chunk, into: planned)
                    start += chunk.count
                }
                for row in batch { checksum &+= Self.hash(row) }
                rows += batch.count
            }
            if let column = planned.table.sequence {
                let highWater = try StoreCopySchema.highWater(of: name, column: column, in: source)
                try StoreCopySchema.moveSequence(of: name, column: column, past: highWater, in: target)
            }
            return StoreCopyReport.Table(name: name, rows: rows, checksum: checksum)
        }
    }

    /// Reads `planned` in `db` whole, page by page, and returns its row count and checksum.
    func checksum(_ planned: PlannedTable, in db: Database) throws -> StoreCopyReport.Table {
        try failing(planned.table.name) {
            var rows = 0
            var checksum: UInt64 = 0
            try forEachBatch(planned, in: db) { batch in
                for row in batch { checksum &+= Self.hash(row) }
                rows += batch.count
            }
            return StoreCopyReport.Table(name: planned.table.name, rows: rows, checksum: checksum)
        }
    }

    /// Calls `body` with the table's rows, `batch` at a time in key order: each page starts after the last key of
    /// the one before (keyset pagination, a row-value comparison both SQLite and PostgreSQL have).
    private func forEachBatch(_ planned: PlannedTable, in db: Database, _ body: ([[SQLValue]]) throws -> Void) throws {
        let key = planned.table.key
        let select = "SELECT \(planned.columns.joined(separator: ", ")) FROM \(planned.table.name)"
        let order = " ORDER BY \(key.joined(separator: ", ")) LIMIT \(planned.table.batch)"
        let after = key.count == 1
            ? " WHERE \(key[0]) > ?"
            : " WHERE (\(key.joined(separator: ", "))) > (\(key.map { _ in "?" }.joined(separator: ", ")))"
        let width = Int32(planned.columns.count)
        var last: [SQLValue]?
        while true {
            let batch = try db.query(select + (last == nil ? "" : after) + order, values: last ?? []) { row in
                (0..<width).map { row.value($0) }
            }
            if batch.isEmpty { return }
            try body(batch)
            if batch.count < planned.table.batch { return }
            last = planned.keyIndexes.map { batch[batch.count - 1][$0] }
        }
    }

    /// One multi-row `INSERT` of `rows` into the target.
    private func insert(_ rows: ArraySlice<[SQLValue]>, into planned: PlannedTable) throws {
        let placeholders = "(" + planned.columns.map { _ in "?" }.joined(separator: ", ") + ")"
        let sql = "INSERT INTO \(planned.table.name) (\(planned.columns.joined(separator: ", "))) VALUES "
            + Array(repeating: placeholders, count: rows.count).joined(separator: ", ")
        var values: [SQLValue] = []
        values.reserveCapacity(rows.count * planned.columns.count)
        for row in rows {
            for (index, value) in row.enumerated() {
                if planned.binaryInTarget[index], case .text(let text) = value {
                    values.append(.blob(Array(text.utf8)))  // a BLOB column SQLite let hold text
                } else {
                    values.append(value)
                }
            }
        }
        try target.run(sql, values: values)
    }

    private func failing<T>(_ table: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreCopyError {
            throw error
        } catch let error as TableFailure {
            throw error
        } catch {
            throw TableFailure(table: table, underlying: error)
        }
    }

    /// 64-bit FNV-1a of a row's values, each tagged with its kind; text and bytes hash alike (a BLOB column SQLite let
    /// hold text arrives as bytes). Pure. FNV rather than a cryptographic digest: it guards against copying mistakes,
    /// not against an adversary, and must stay cheap over millions of rows.
    static func hash(_ row: [SQLValue]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        func mix(_ value: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) { mix(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        func mix<Bytes: Collection>(bytes: Bytes) where Bytes.Element == UInt8 {
            mix(UInt64(bytes.count))
            for byte in bytes { mix(byte) }
        }
        for value in row {
            switch value {
            case .null: mix(UInt8(0))
            case .integer(let integer): mix(UInt8(1)); mix(UInt64(bitPattern: integer))
            case .real(let real): mix(UInt8(2)); mix(real.bitPattern)
            case .text(let text): mix(UInt8(3)); mix(bytes: text.utf8)
            case .blob(let bytes): mix(UInt8(3)); mix(bytes: bytes)
            }
        }
        return hash
    }
}
