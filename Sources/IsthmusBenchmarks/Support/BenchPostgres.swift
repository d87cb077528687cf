import Foundation

/// The PostgreSQL the bridge-only and scale parts run a second time on (`--postgres URL`: `scripts/bench` starts the
/// test bed's cluster for it, `scripts/testbed start --postgres`). Each run gets a new database, created with `psql`
/// (the store's own connection is internal to IsthmusStore, and creating a database is set-up, not the bridge's job).
struct BenchPostgres: Sendable {
    /// A superuser URL on the cluster (its `postgres` database).
    let adminURL: String

    /// What the PostgreSQL column means, printed under the table.
    static let note = "PostgreSQL column: the same runs with the store on a local PostgreSQL 15 (the test bed's cluster, "
        + "on the same cores, over TCP loopback) with its default durability (fsync, synchronous_commit and "
        + "full_page_writes on; the SQLite column is synchronous=normal); the bridge's CPU per message leaves out the server's"

    /// `psql` of the bed's PostgreSQL (`ISTHMUS_TEST_POSTGRES_BIN`), else Debian's wrapper.
    static var psql: String {
        if let bin = ProcessInfo.processInfo.environment["ISTHMUS_TEST_POSTGRES_BIN"], !bin.isEmpty { return bin + "/psql" }
        return "/usr/bin/psql"
    }

    /// Turns PostgreSQL's default durability back on: the test bed runs its cluster with fsync, synchronous_commit and
    /// full_page_writes off (fast tests), which would flatter the store. Blocks (runs psql).
    func restoreDefaultDurability() throws {
        try run(["ALTER SYSTEM SET fsync = on", "ALTER SYSTEM SET synchronous_commit = on",
                 "ALTER SYSTEM SET full_page_writes = on", "SELECT pg_reload_conf()"])
    }

    /// Creates `isthmus_bench_<name>_<random>` and returns its URL. Blocks (runs psql).
    func createDatabase(_ name: String) throws -> String {
        let database = "isthmus_bench_\(name)_\(UUID().uuidString.prefix(8).lowercased())"
        guard var components = URLComponents(string: adminURL) else { throw BenchmarkFailure("bad --postgres URL") }
        components.path = "/" + database
        guard let url = components.string else { throw BenchmarkFailure("bad --postgres URL") }
        try run(["CREATE DATABASE \(database)"])
        return url
    }

    /// Runs each command on its own (`ALTER SYSTEM` refuses to run inside a transaction block).
    private func run(_ commands: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.psql)
        process.arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", adminURL] + commands.flatMap { ["-c", $0] }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkFailure("psql failed: \(commands.joined(separator: "; "))") }
    }
}
