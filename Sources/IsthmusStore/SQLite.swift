private import CSQLite

/// A SQLite result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, …).
struct SQLiteResultCode: RawRepresentable, Sendable, Hashable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static let ok = SQLiteResultCode(rawValue: 0)
    public static let busy = SQLiteResultCode(rawValue: 5)
    public static let locked = SQLiteResultCode(rawValue: 6)
    /// SQLITE_FULL: the disk (or the `max_page_count` limit) has no room for the write.
    public static let full = SQLiteResultCode(rawValue: 13)
    /// SQLITE_MISUSE: also what this wrapper reports for a call on a closed connection.
    public static let misuse = SQLiteResultCode(rawValue: 21)
    public static let constraint = SQLiteResultCode(rawValue: 19)
    public static let row = SQLiteResultCode(rawValue: 100)
    public static let done = SQLiteResultCode(rawValue: 101)
    /// The primary code (extended codes carry extra detail in the upper bits).
    public var primary: SQLiteResultCode { SQLiteResultCode(rawValue: rawValue & 0xff) }
}

/// A failed SQLite call, with the statement that failed.
struct SQLiteError: Error, Sendable, CustomStringConvertible {
    public var code: SQLiteResultCode
    public var message: String
    public var sql: String?
    public var description: String {
        "SQLite error \(code.rawValue): \(message)" + (sql.map { " (in: \($0.prefix(120)))" } ?? "")
    }
}

/// One open SQLite database. Not thread-safe: each is used from one thread by its owner — the ``Store``, the
/// ``LeaseChannel`` and the ``WALCheckpointer`` each have their own, as do `migrate-store` and `doctor` on the
/// caller's thread — and internal to this target so no other module can reach the connection.
final class SQLiteConnection {
    private let handle: OpaquePointer
    private var statements: [String: Statement] = [:]
    /// Set by ``close()``: every later call fails instead of touching the closed handle.
    private(set) var isClosed = false

    /// Opens (creating if needed) the database at `path`. Does file I/O.
    init(path: String) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: SQLiteResultCode(rawValue: rc), message: "\(message): \(path)", sql: nil)
        }
        handle = db
        sqlite3_busy_timeout(db, 5000)
    }

    deinit { close() }

    /// Finalizes the statements and closes the database. Idempotent; later calls throw `SQLITE_MISUSE`.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    private func checkOpen(_ sql: String) throws(SQLiteError) {
        if isClosed { throw SQLiteError(code: .misuse, message: "the store is closed", sql: sql) }
    }

    /// Runs one or more statements without parameters (schema, pragmas).
    func execute(_ sql: String) throws(SQLiteError) {
        try checkOpen(sql)
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? "error"
            sqlite3_free(errorMessage)
            throw SQLiteError(code: SQLiteResultCode(rawValue: rc), message: message, sql: sql)
        }
    }

    /// Runs a statement that returns no rows; returns the number of rows changed.
    @discardableResult
    func run(_ sql: String, _ parameters: any SQLBindable...) throws(SQLiteError) -> Int {
        try run(sql, parameters: parameters)
    }

    /// ``run(_:_:)`` with the parameters in an array (what ``Database`` forwards).
    @discardableResult
    func run(_ sql: String, parameters: [any SQLBindable]) throws(SQLiteError) -> Int {
        let statement = try prepare(sql)
        try statement.bind(parameters)
        defer { statement.reset() }
        while try statement.step() {}
        return Int(sqlite3_changes(handle))
    }

    /// Runs a query and maps each row.
    func query<T>(_ sql: String, _ parameters: any SQLBindable..., map: (Row) throws -> T) throws -> [T] {
        try query(sql, parameters: parameters, map: map)
    }

    /// ``query(_:_:map:)`` with the parameters in an array (what ``Database`` forwards).
    func query<T>(_ sql: String, parameters: [any SQLBindable], map: (Row) throws -> T) throws -> [T] {
        let statement = try prepare(sql)
        try statement.bind(parameters)
        defer { statement.reset() }
        var rows: [T] = []
        while try statement.step() { rows.append(try map(Row(statement: statement))) }
        return rows
    }

    /// The rowid of the last insert.
    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE` … `COMMIT`, rolled back when it throws).
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    private func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try checkOpen(sql)
        if let cached = statements[sql] { return cached }
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard rc == SQLITE_OK, let raw else {
            throw SQLiteError(code: SQLiteResultCode(rawValue: rc), message: String(cString: sqlite3_errmsg(handle)), sql: sql)
        }
        let statement = Statement(raw, connection: handle, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// A prepared statement, finalized in `deinit`.
    final class Statement {
        let raw: OpaquePointer
        let connection: OpaquePointer
        let sql: String

        init(_ raw: OpaquePointer, connection: OpaquePointer, sql: String) {
            self.raw = raw
            self.connection = connection
            self.sql = sql
        }

        deinit { sqlite3_finalize(raw) }

        func bind(_ parameters: [any SQLBindable]) throws(SQLiteError) {
            for (offset, parameter) in parameters.enumerated() {
                let index = Int32(offset + 1)
                let rc: Int32
                switch parameter.sqlValue {
                case .null: rc = sqlite3_bind_null(raw, index)
                case .integer(let value): rc = sqlite3_bind_int64(raw, index, value)
                case .real(let value): rc = sqlite3_bind_double(raw, index, value)
                case .text(let value):
                    // Over the string's own UTF-8 with its length (SQLite copies it): no NUL-terminated copy of our own
                    // first, which `String` → `char *` makes for small and bridged strings (issue 26's allocations).
                    // As a C string would, it ends at a NUL (see `StoreBackendTests.aNULInTextIsStored`).
                    var text = value
                    rc = text.withUTF8 { bytes in
                        let length = bytes.firstIndex(of: 0) ?? bytes.count
                        // An empty string is text, not NULL: a pointer to an empty C string, never nil.
                        guard let start = bytes.baseAddress, length > 0 else { return sqlite3_bind_text(raw, index, "", 0, isthmus_sqlite_transient()) }
                        return start.withMemoryRebound(to: CChar.self, capacity: length) {
                            sqlite3_bind_text64(raw, index, $0, sqlite3_uint64(length), isthmus_sqlite_transient(), UInt8(SQLITE_UTF8))
                        }
                    }
                case .blob(let bytes):
                    rc = bytes.withUnsafeBytes {
                        sqlite3_bind_blob(raw, index, $0.baseAddress, Int32($0.count), isthmus_sqlite_transient())
                    }
                }
                guard rc == SQLITE_OK else { throw error(rc) }
            }
        }

        /// Advances; true while a row is available.
        func step() throws(SQLiteError) -> Bool {
            let rc = sqlite3_step(raw)
            switch rc {
            case SQLITE_ROW: return true
            case SQLITE_DONE: return false
            default:
                let failure = error(rc)
                sqlite3_reset(raw)
                throw failure
            }
        }

        func reset() {
            sqlite3_reset(raw)
            sqlite3_clear_bindings(raw)
        }

        private func error(_ rc: Int32) -> SQLiteError {
            SQLiteError(code: SQLiteResultCode(rawValue: sqlite3_extended_errcode(connection)),
                        message: String(cString: sqlite3_errmsg(connection)), sql: sql)
        }
    }

    /// The current row of a query, read by column index.
    struct Row {
        let statement: Statement

        func string(_ column: Int32) -> String? {
            guard sqlite3_column_type(statement.raw, column) != SQLITE_NULL,
                  let text = sqlite3_column_text(statement.raw, column) else { return nil }
            let count = Int(sqlite3_column_bytes(statement.raw, column))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
        }

        func int(_ column: Int32) -> Int? {
            sqlite3_column_type(statement.raw, column) == SQLITE_NULL ? nil : Int(sqlite3_column_int64(statement.raw, column))
        }

        func double(_ column: Int32) -> Double? {
            sqlite3_column_type(statement.raw, column) == SQLITE_NULL ? nil : sqlite3_column_double(statement.raw, column)
        }

        /// A blob (or text) column's bytes; empty when NULL.
        func blob(_ column: Int32) -> [UInt8] {
            // sqlite3_column_blob first, then sqlite3_column_bytes (the SQLite docs' required order).
            guard let bytes = sqlite3_column_blob(statement.raw, column) else { return [] }
            let count = Int(sqlite3_column_bytes(statement.raw, column))
            return Array(UnsafeRawBufferPointer(start: bytes, count: count))
        }

        /// Parses a text column into a typed id; nil when NULL or unparsable.
        func id<T: LosslessStringConvertible>(_ column: Int32, as type: T.Type = T.self) -> T? {
            string(column).flatMap(T.init)
        }

        /// The column's value in its storage class (SQLite "Datatypes In SQLite" §2: a value, not its column, has a type).
        func value(_ column: Int32) -> SQLValue {
            switch sqlite3_column_type(statement.raw, column) {
            case SQLITE_NULL: .null
            case SQLITE_INTEGER: .integer(sqlite3_column_int64(statement.raw, column))
            case SQLITE_FLOAT: .real(sqlite3_column_double(statement.raw, column))
            case SQLITE_BLOB: .blob(blob(column))
            default: .text(string(column) ?? "")
            }
        }
    }
}
