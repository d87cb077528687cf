import Foundation
@testable import IsthmusStore
import Network
import Synchronization
import TestSupport
import Testing

/// Whether process `pid` of this machine is gone or a zombie (its descriptors are closed either way).
private func processHasExited(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
    // "pid (comm) S …": the state follows the last ')'.
    guard let close = stat.lastIndex(of: ")") else { return true }
    return stat[close...].dropFirst().drop { $0 == " " }.first == "Z"
}

/// `PostgresConnection` and `PostgresPool` against the test bed's PostgreSQL 15 (`scripts/test` starts it; without
/// it the suite is skipped, ``needsTestBedPostgres``). Each test has a database of its own (``PostgresTestDatabase``).
@Suite(.needsTestBedPostgres) struct PostgresConnectionRealServerTests {
    @Test func missingURLExplainsHowToRunTheTests() {
        let error = #expect(throws: TestBedError.self) { try PostgresTestDatabase(environment: [:]) }
        #expect(error.map { "\($0)" } == "ISTHMUS_TEST_POSTGRES_URL is not set: run the PostgreSQL tests through "
            + "scripts/test (or source DIR/env after scripts/testbed start --postgres)")
    }

    @Test func questionMarksBecomeParametersOnlyOutsideQuotesAndComments() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(url: database.url)
        let rows = try db.query("""
            SELECT '?' AS "what?", ?::bigint, -- a comment? yes
                   /* another? /* nested? */ */ ?::text || E'\\'?', $$?$$
            """, [.integer(7), .text("x")]) { row in
            [row.string(0), row.int(1).map(String.init), row.string(2), row.string(3)]
        }
        #expect(rows == [["?", "7", "x'?", "?"]])
    }

    @Test func everyValueTypeRoundTrips() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(url: database.url)
        try db.execute("CREATE TABLE t (n integer PRIMARY KEY, i bigint, r double precision, s text, b bytea)")
        let oddText = "e\u{301} 😀 𝄞 \u{202E}rtl\u{202C} \u{FEFF}bom \u{7F}\t\n\\ ' \" % _ ? $1 日本語 \u{10FFFF}"
        let allBytes = (0...255).map(UInt8.init)
        let values: [[SQLValue]] = [
            [.integer(1), .integer(.max), .real(1e-300), .text(oddText), .blob(allBytes)],
            [.integer(2), .integer(.min), .real(-.infinity), .text(""), .blob([])],
            [.integer(3), .null, .null, .null, .null],
            [.integer(4), .integer(0), .real(0.1 + 0.2), .text("plain"), .blob([0])],
        ]
        for row in values { try db.run("INSERT INTO t VALUES (?, ?, ?, ?, ?)", row) }
        let read = try db.query("SELECT n, i, r, s, b, b IS NULL FROM t ORDER BY n", []) { row in
            (row.int(0), row.int(1), row.double(2), row.string(3), row.blob(4), row.int(5))
        }
        #expect(read.count == 4)
        #expect(read[0].1 == .max && read[0].2 == 1e-300 && read[0].3 == oddText && read[0].4 == allBytes)
        #expect(read[1].1 == .min && read[1].2 == -.infinity && read[1].3 == "" && read[1].4 == [] && read[1].5 == 0)
        #expect(read[2].1 == nil && read[2].2 == nil && read[2].3 == nil && read[2].4 == [] && read[2].5 == 1)
        #expect(read[3].1 == 0 && read[3].2 == 0.1 + 0.2 && read[3].3 == "plain" && read[3].4 == [0])
        // A bytea parameter compares as bytea, an integer one against an integer column of another width.
        #expect(try db.query("SELECT n FROM t WHERE b = ?", [.blob(allBytes)]) { $0.int(0) } == [1])
        #expect(try db.query("SELECT n FROM t WHERE n = ?", [.integer(4)]) { $0.int(0) } == [4])
        #expect(try db.query("SELECT ?::real", [.real(.nan)]) { $0.double(0) }.first??.isNaN == true)
    }

    @Test func aReadOnlyServerIsALostConnectionSoThePoolReconnects() throws {
        // A demoted primary after a database failover: its writes fail with 25006 read_only_sql_transaction.
        let database = try PostgresTestDatabase()
        let pool = PostgresPool(url: database.url, size: 1)
        try pool.withConnection { db in
            try db.execute("CREATE TABLE t (n integer)")
            try db.execute("SET default_transaction_read_only = on")
        }
        let error = #expect(throws: PostgresError.self) {
            try pool.withConnection { db in try db.run("INSERT INTO t VALUES (?)", [.integer(1)]) }
        }
        #expect(error?.sqlState == "25006")
        #expect(error?.isConnectionFailure == true)
        #expect(StoreError(error!).kind == .unavailable)
        #expect(pool.idleCount == 0, "the read-only session was dropped, not pooled")
        // The next check-out connects afresh (whose session is read-write again) and the write succeeds.
        #expect(try pool.withConnection { db in try db.run("INSERT INTO t VALUES (?)", [.integer(1)]) } == 1)
    }

    @Test func aSerializationFailureRunsTheTransactionOnceMoreThenIsUnavailable() throws {
        let database = try PostgresTestDatabase()
        let db = Database(.postgres(PostgresPool(url: database.url, size: 1)))
        let raise = "DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$"
        var runs = 0
        let value = try db.transaction { () throws -> Int in
            runs += 1
            if runs == 1 { try db.execute(raise) }
            return 7
        }
        #expect(value == 7 && runs == 2, "retried once after 40001")
        runs = 0
        let error = #expect(throws: StoreError.self) {
            try db.transaction { runs += 1; try db.execute(raise.replacingOccurrences(of: "40001", with: "40P01")) }
        }
        #expect(runs == 2 && error?.kind == .unavailable, "a deadlock twice is unavailable, not retried forever")
        let timeout = #expect(throws: StoreError.self) {
            try db.transaction { try db.execute("SET LOCAL statement_timeout = '10ms'; SELECT pg_sleep(1)") }
        }
        #expect(timeout?.kind == .unavailable, "57014 query_canceled")
        #expect(StoreError(PostgresError(sqlState: "53300", message: "pool", sql: nil, isConnectionFailure: false)).kind
                == .unavailable)
    }

    @Test func statementsDiscardedByTheServerArePreparedAgain() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(url: database.url)
        #expect(try db.query("SELECT ?::integer + 1", [.integer(1)]) { $0.int(0) } == [2])
        try db.execute("DISCARD ALL")
        #expect(try db.query("SELECT ?::integer + 1", [.integer(2)]) { $0.int(0) } == [3], "26000 → prepared again")
    }

    @Test func theDefaultsAskForAReadWriteSessionAndCutOffIdleTransactions() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(url: database.url)
        #expect(try db.query("SHOW idle_in_transaction_session_timeout", []) { $0.string(0) } == ["5s"])
        #expect(PostgresConnection.defaultParameters.contains { $0 == ("target_session_attrs", "read-write") })
    }

    @Test func runReturnsTheRowsChanged() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(url: database.url)
        #expect(try db.run("CREATE TABLE t (k text PRIMARY KEY, v integer)", []) == 0)
        for key in ["a", "b", "c"] { #expect(try db.run("INSERT INTO t VALUES (?, 0)", [.text(key)]) == 1) }
        #expect(try db.run("UPDATE t SET v = v + ?", [.integer(1)]) == 3)
        #expect(try db.run("INSERT INTO t VALUES (?, 0) ON CONFLICT DO NOTHING", [.text("a")]) == 0)
        #expect(try db.run("DELETE FROM t WHERE k = ?", [.text("nothing")]) == 0)
        #expect(try db.run("DELETE FROM t WHERE k <> ?", [.text("a")]) == 2)
    }

    @Test func statementsArePreparedOncePerConnection() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(url: database.url)
        for value in 0..<3 { _ = try db.query("SELECT ?::integer + 1", [.integer(Int64(value))]) { $0.int(0) } }
        let prepared = try db.query("SELECT statement FROM pg_prepared_statements ORDER BY prepare_time", []) {
            $0.string(0)
        }
        #expect(prepared == ["SELECT $1::integer + 1", "SELECT statement FROM pg_prepared_statements ORDER BY prepare_time"])
    }

    @Test func aCachedStatementFollowsATableThatChangedShape() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(url: database.url)
        try db.execute("CREATE TABLE t (a integer); INSERT INTO t VALUES (1)")
        #expect(try db.query("SELECT * FROM t WHERE a = ?", [.integer(1)]) { $0.int(0) } == [1])
        try db.execute("ALTER TABLE t ADD COLUMN b text DEFAULT 'x'")
        #expect(try db.query("SELECT * FROM t WHERE a = ?", [.integer(1)]) { [$0.int(0).map(String.init), $0.string(1)] }
            == [["1", "x"]])
    }

    @Test func transactionRollsBackWhenTheBodyThrowsAndCommitsOtherwise() throws {
        struct Abort: Error {}
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(url: database.url)
        try db.execute("CREATE TABLE t (k text PRIMARY KEY)")
        #expect(throws: Abort.self) {
            try db.transaction {
                try db.run("INSERT INTO t VALUES (?)", [.text("rolled back")])
                throw Abort()
            }
        }
        _ = try db.transaction { try db.run("INSERT INTO t VALUES (?)", [.text("kept")]) }
        #expect(try db.query("SELECT k FROM t", []) { $0.string(0) } == ["kept"])

        // A failed statement whose error the body swallows: COMMIT is answered with ROLLBACK, and that must throw.
        let error = #expect(throws: PostgresError.self) {
            try db.transaction { () throws -> Void in
                try db.run("INSERT INTO t VALUES (?)", [.text("lost")])
                _ = try? db.run("INSERT INTO t VALUES (?)", [.text("kept")])
            }
        }
        #expect(error?.sqlState == "25P02")
        #expect(try db.query("SELECT k FROM t", []) { $0.string(0) } == ["kept"])
    }

    @Test func uniqueViolationCarriesItsSQLState() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(url: database.url)
        try db.execute("CREATE TABLE t (k text PRIMARY KEY)")
        try db.run("INSERT INTO t VALUES (?)", [.text("a")])
        let error = #expect(throws: PostgresError.self) { try db.run("INSERT INTO t VALUES (?)", [.text("a")]) }
        #expect(error?.sqlState == "23505")
        #expect(error?.isUniqueViolation == true)
        #expect(error?.isConnectionFailure == false)
        #expect(error?.sql == "INSERT INTO t VALUES (?)")
        #expect(!db.isBroken)
        #expect(try db.query("SELECT count(*) FROM t", []) { $0.int(0) } == [1])
    }

    @Test func hostileTextInParametersIsData() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(url: database.url)
        try db.execute("CREATE TABLE t (k text)")
        let hostile = ["'); DROP TABLE t; --", "$1", "?", "\\x00", "' OR '1'='1", "$$; DROP TABLE t; $$", "\"t\""]
        for text in hostile { try db.run("INSERT INTO t VALUES (?)", [.text(text)]) }
        #expect(try db.query("SELECT k FROM t ORDER BY k", []) { $0.string(0) } == hostile.sorted().map(Optional.some))
        #expect(try db.query("SELECT count(*) FROM t WHERE k = ?", [.text("' OR '1'='1")]) { $0.int(0) } == [1])
        let nul = #expect(throws: PostgresError.self) { try db.run("INSERT INTO t VALUES (?)", [.text("a\u{0}b")]) }
        #expect(nul?.sqlState == "22021")
        #expect(nul?.isConnectionFailure == false)
        #expect(try db.query("SELECT count(*) FROM t", []) { $0.int(0) } == [hostile.count])
    }

    @Test func wrongParameterCountIsAClearError() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(url: database.url)
        let error = #expect(throws: PostgresError.self) { try db.run("SELECT ?::integer, ?::integer", [.integer(1)]) }
        #expect(error?.message.contains("2 placeholders but 1 parameters") == true)
        #expect(!db.isBroken)
    }

    @Test func sessionDefaultsAndURLOverrides() throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(url: database.url)
        #expect(try db.query("SHOW application_name", []) { $0.string(0) } == ["isthmus"])
        #expect(try db.query("SHOW client_encoding", []) { $0.string(0) } == ["UTF8"])
        let named = try PostgresConnection(url: database.url + "?application_name=isthmus-standby&client_encoding=LATIN1")
        #expect(try named.query("SHOW application_name", []) { $0.string(0) } == ["isthmus-standby"])
        #expect(try named.query("SHOW client_encoding", []) { $0.string(0) } == ["UTF8"])
    }

    @Test func terminatedSessionIsReportedBroken() async throws {
        let database = try PostgresTestDatabase()
        let db = try PostgresConnection(url: database.url)
        let error = #expect(throws: PostgresError.self) {
            try db.query("SELECT pg_terminate_backend(pg_backend_pid())", []) { $0.int(0) }
        }
        #expect(error?.isConnectionFailure == true)
        #expect(db.isBroken)

        // Terminated by someone else while idle: noticed by the next poll, without a statement.
        let idle = try PostgresConnection(url: database.url)
        #expect(idle.pollConnection())
        let killer = try PostgresConnection(url: database.url)
        #expect(try killer.query("SELECT pg_terminate_backend(?)", [.integer(Int64(idle.backendPID))]) { $0.int(0) } == [1])
        try await eventually("the idle connection notices it was terminated") { !idle.pollConnection() }
        #expect(idle.isBroken)
    }

    @Test func poolReplacesABrokenConnectionAndPreparesAgain() async throws {
        let database = try PostgresTestDatabase()
        let pool = PostgresPool(url: database.url, size: 2)
        let sql = "SELECT ?::integer * 2"
        let first = try pool.withConnection { db in
            (pid: db.backendPID, value: try db.query(sql, [.integer(21)]) { $0.int(0) })
        }
        #expect(first.value == [42])
        #expect(pool.idleCount == 1)

        let killer = try PostgresConnection(url: database.url)
        #expect(try killer.query("SELECT pg_terminate_backend(?)", [.integer(Int64(first.pid))]) { $0.int(0) } == [1])
        // The bed runs on this machine: once the backend process has exited, the kernel has closed its socket, so
        // the pool's check-out is bound to see the end of the stream. (pg_stat_activity forgets the session earlier,
        // while the backend still runs its exit hooks.)
        try await eventually("the pooled session's backend process has exited") { processHasExited(first.pid) }
        let second = try pool.withConnection { db in
            (pid: db.backendPID, value: try db.query(sql, [.integer(5)]) { $0.int(0) })
        }
        #expect(second.pid != first.pid)
        #expect(second.value == [10])

        // A connection that broke while checked out is not put back.
        let broken = try pool.checkOut()
        _ = try? broken.run("SELECT pg_terminate_backend(pg_backend_pid())", [])
        #expect(broken.isBroken)
        pool.checkIn(broken)
        #expect(pool.idleCount == 0)
        #expect(try pool.withConnection { try $0.query("SELECT 1", []) { $0.int(0) } } == [1])
    }

    @Test func poolRollsBackATransactionLeftOpen() throws {
        let database = try PostgresTestDatabase()
        let pool = PostgresPool(url: database.url, size: 1)
        try pool.withConnection { db in
            try db.execute("CREATE TABLE t (k integer)")
            try db.execute("BEGIN")
            try db.run("INSERT INTO t VALUES (?)", [.integer(1)])
            #expect(db.isInTransaction)
        }
        let (open, rows) = try pool.withConnection { db in
            (db.isInTransaction, try db.query("SELECT count(*) FROM t", []) { $0.int(0) })
        }
        #expect(!open)
        #expect(rows == [0])
    }

    @Test func poolWaitsForAFreeConnectionAndTimesOut() throws {
        let database = try PostgresTestDatabase()
        let pool = PostgresPool(url: database.url, size: 1)
        let held = try pool.checkOut()
        let error = #expect(throws: PostgresError.self) { try pool.checkOut(waitingAtMost: .milliseconds(50)) }
        #expect(error?.sqlState == "53300")
        pool.checkIn(held)
        let again = try pool.checkOut(waitingAtMost: .milliseconds(50))
        #expect(again === held)
        pool.checkIn(again)
    }

    @Test func poolHandsOutAtMostSizeConnectionsAcrossThreads() throws {
        let database = try PostgresTestDatabase()
        let pool = PostgresPool(url: database.url, size: 2)
        let first = try pool.checkOut()
        let second = try pool.checkOut()
        #expect(first !== second && first.backendPID != second.backendPID)
        #expect(throws: PostgresError.self) { try pool.checkOut(waitingAtMost: .milliseconds(50)) }
        pool.checkIn(first)
        pool.checkIn(second)

        // Eight threads, forty statements each, through two connections.
        let seen = Mutex(Set<Int32>())
        let wrong = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<40 {
                do {
                    let (pid, value) = try pool.withConnection { db in
                        let sum = try db.query("SELECT ?::integer + ?::integer", [.integer(Int64(thread)), .integer(Int64(index))]) {
                            $0.int(0)
                        }
                        return (db.backendPID, sum)
                    }
                    seen.withLock { _ = $0.insert(pid) }
                    if value != [thread + index] { wrong.withLock { $0 += 1 } }
                } catch {
                    wrong.withLock { $0 += 1 }
                }
            }
        }
        #expect(wrong.withLock { $0 } == 0)
        // Only the two sessions from before (how many of them served depends on how the threads interleaved).
        let sessions = seen.withLock { $0 }
        #expect(!sessions.isEmpty && sessions.isSubset(of: [first.backendPID, second.backendPID]), "\(sessions)")
        #expect(pool.idleCount == 2)
    }

    @Test func wrongPasswordIsAClearErrorAndTheRightOneConnects() throws {
        // The bed trusts every role on loopback except `isthmus_password`, which must give its password (pg_hba.conf).
        let database = try PostgresTestDatabase()
        try database.runAsAdministrator("""
            DO $$ BEGIN
              CREATE ROLE isthmus_password LOGIN PASSWORD 'right';
            EXCEPTION WHEN duplicate_object THEN
              ALTER ROLE isthmus_password LOGIN PASSWORD 'right';
            END $$
            """)
        let port = try #require(URLComponents(string: database.url)?.port)
        let url = { (password: String) in "postgresql://isthmus_password:\(password)@127.0.0.1:\(port)/\(database.name)" }
        let error = #expect(throws: PostgresError.self) { try PostgresConnection(url: url("wrong")) }
        #expect(error?.message.contains("password authentication failed") == true)
        #expect(error?.isConnectionFailure == true)
        #expect(error?.message.contains("wrong") == false)
        let connection = try PostgresConnection(url: url("right"))
        #expect(try connection.query("SELECT current_user", []) { $0.string(0) } == ["isthmus_password"])
    }

    @Test func refusedPortFailsAtOnce() throws {
        let closed = try ReservedPort()
        let port = closed.port
        let started = ContinuousClock.now
        let error = #expect(throws: PostgresError.self) { try PostgresConnection(url: "postgresql://isthmus@127.0.0.1:\(port)/x") }
        #expect(error?.message.contains("Connection refused") == true, "\(error?.message ?? "")")
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test func silentServerFailsAfterTheConnectTimeout() throws {
        // Accepts TCP connections and never answers the start-up message.
        let silent = try TCPListener()
        let started = ContinuousClock.now
        let error = #expect(throws: PostgresError.self) {
            try PostgresConnection(url: "postgresql://isthmus@127.0.0.1:\(silent.port)/x?connect_timeout=2")
        }
        let elapsed = ContinuousClock.now - started
        #expect(error?.message.contains("timeout") == true)
        #expect(elapsed >= .seconds(1) && elapsed < .seconds(5), "took \(elapsed)")
    }

    @Test func poolBacksOffAfterAFailedConnect() throws {
        let closed = try ReservedPort()
        let port = closed.port
        let pool = PostgresPool(url: "postgresql://isthmus@127.0.0.1:\(port)/x",
                                backoff: PostgresReconnectBackoff(initial: .seconds(60)))
        let first = #expect(throws: PostgresError.self) { try pool.checkOut() }
        #expect(first?.message.contains("Connection refused") == true)
        let second = #expect(throws: PostgresError.self) { try pool.checkOut() }
        #expect(second?.message.hasPrefix("not retrying yet after: ") == true)
    }
}
