import Foundation

/// A PostgreSQL database of its own for one test, on the test bed's cluster (`scripts/testbed start --postgres`, which
/// `scripts/test` always uses): `CREATE DATABASE isthmus_test_<random>` on creation, `DROP DATABASE … WITH (FORCE)`
/// when released, so tests running in parallel never see each other's rows. Creating runs `psql` synchronously on
/// the calling thread (≈ 0.1 s, longer while other tests create theirs; does I/O: async callers go through
/// ``StoreBackend/open(persistent:logger:)``, which keeps it off the cooperative pool); dropping runs on a Dispatch
/// thread, not waited for.
///
/// `psql` rather than the store's own connection: `PostgresConnection` is internal to `IsthmusStore`, and the tests
/// of that connection should not depend on it for their set-up.
public final class PostgresTestDatabase: Sendable {
    /// The database's name, `isthmus_test_<32 hex digits>`.
    public let name: String
    /// A libpq URI for it: the bed's URL with this database.
    public let url: String
    private let adminURL: String
    private let psql: String

    /// Creates the database. Throws ``TestBedError/postgresNotConfigured`` when the environment names no test-bed
    /// PostgreSQL (the tests were not started through `scripts/test`), or ``TestBedError/commandFailed(arguments:status:output:)``.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        adminURL = try TestBed.postgresURL(environment)
        psql = TestBed.postgresTool("psql", environment)
        name = "isthmus_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        url = try Self.replacingDatabase(in: adminURL, with: name)
        try Self.runPSQL(psql, url: adminURL, command: "CREATE DATABASE \(name)")
    }

    deinit {
        // Off the releasing thread (often one of the cooperative pool's few): nothing waits for the drop.
        let (psql, adminURL, name) = (psql, adminURL, name)
        DispatchQueue.global().async {
            try? Self.runPSQL(psql, url: adminURL, command: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        }
    }

    /// Runs one SQL command as the bed's superuser in the bed's `postgres` database (roles, `pg_terminate_backend`).
    /// Blocks; does I/O.
    public func runAsAdministrator(_ command: String) throws {
        try Self.runPSQL(psql, url: adminURL, command: command)
    }

    /// `url` with its path (the database) replaced by `/database`; the query (sslmode…) is kept.
    static func replacingDatabase(in url: String, with database: String) throws -> String {
        guard var components = URLComponents(string: url), components.scheme?.hasPrefix("postgres") == true else {
            throw TestBedError.invalidValue(variable: "ISTHMUS_TEST_POSTGRES_URL", value: url)
        }
        components.path = "/" + database
        guard let replaced = components.string else {
            throw TestBedError.invalidValue(variable: "ISTHMUS_TEST_POSTGRES_URL", value: url)
        }
        return replaced
    }

    private static func runPSQL(_ psql: String, url: String, command: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: psql)
        process.arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", command]
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw TestBedError.commandFailed(arguments: [psql, "-c", command], status: process.terminationStatus, output: text)
        }
    }
}

extension TestBed {
    /// The test bed's PostgreSQL as a libpq URI (`ISTHMUS_TEST_POSTGRES_URL`, written by `scripts/testbed start
    /// --postgres`): the superuser `isthmus`, trusted on loopback, in the `postgres` database.
    /// - Throws: ``TestBedError/postgresNotConfigured`` when it is unset.
    public static func postgresURL(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        guard let url = environment["ISTHMUS_TEST_POSTGRES_URL"], !url.isEmpty else {
            throw TestBedError.postgresNotConfigured
        }
        return url
    }

    /// The path of a PostgreSQL client program (`psql`, `pg_isready`…) of the bed's version
    /// (`ISTHMUS_TEST_POSTGRES_BIN`), else `/usr/bin/NAME` (Debian's wrapper, which picks the newest installed version).
    static func postgresTool(_ name: String, _ environment: [String: String]) -> String {
        if let bin = environment["ISTHMUS_TEST_POSTGRES_BIN"], !bin.isEmpty { return bin + "/" + name }
        return "/usr/bin/" + name
    }

    /// The test bed's PostgreSQL URL, or nil when the bed runs none. Reads the environment only.
    public var postgresURL: String? { try? Self.postgresURL() }
}
