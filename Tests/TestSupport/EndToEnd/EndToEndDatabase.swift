import Foundation
import IsthmusCommon
import IsthmusStore

/// Where one end-to-end scenario's bridge keeps its store, chosen by `ISTHMUS_TEST_DATABASE` (`scripts/test
/// --database postgres` sets it): `sqlite` (the default) leaves the bed's `database: path: isthmus.sqlite`, which
/// resolves to the scenario's own folder; `postgres` creates a database of the scenario's own on the bed's cluster
/// (``PostgresTestDatabase``) and points the config's `database: url:` at it, so `serve` and every CLI command the
/// scenario runs with that config (`link`, `links`, `doctor`) use it.
///
/// The PostgreSQL database is dropped when this is released (at the end of the scenario, pass or fail): the
/// scenario's `serve-N.log` files stay in the bed's folder, which `scripts/test` keeps on failure.
public final class EndToEndDatabase: Sendable {
    /// The backend the scenario runs on.
    public let backend: StoreBackend
    private let postgres: PostgresTestDatabase?

    /// Reads `ISTHMUS_TEST_DATABASE` (unless `backend` is given) and, for `postgres`, creates the scenario's database
    /// (blocks on `psql`, ≈ 0.1 s).
    /// - Throws: ``TestBedError/invalidValue(variable:value:)`` for anything but `sqlite` or `postgres`;
    ///   ``TestBedError/postgresNotConfigured`` when `postgres` is asked for on a bed without PostgreSQL.
    /// `backend` overrides the variable, for the scenarios that need PostgreSQL whatever the pass (a PostgreSQL outage).
    public init(backend: StoreBackend? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let name = environment["ISTHMUS_TEST_DATABASE"].flatMap { $0.isEmpty ? nil : $0 } ?? StoreBackend.sqlite.rawValue
        guard let chosen = backend ?? StoreBackend(rawValue: name) else {
            throw TestBedError.invalidValue(variable: "ISTHMUS_TEST_DATABASE", value: name)
        }
        self.backend = chosen
        postgres = chosen == .postgres ? try PostgresTestDatabase(environment: environment) : nil
    }

    /// The store's location when it is PostgreSQL (nil for SQLite, whose file the config names relative to itself).
    public var postgresLocation: DatabaseLocation? {
        postgres.flatMap { PostgresURL($0.url) }.map { .postgres(url: $0) }
    }

    /// The bed's config text with its `database:` section pointing at this database: unchanged for SQLite,
    /// `url:` instead of `path: isthmus.sqlite` for PostgreSQL.
    /// - Throws: ``TestBedError/invalidValue(variable:value:)`` when the config has no such section to replace
    ///   (the bed's config changed shape; a silent SQLite run would pass for a PostgreSQL one).
    public func configured(_ config: String) throws -> String {
        guard let postgres else { return config }
        let sqlite = "\ndatabase:\n  path: isthmus.sqlite\n"
        guard config.contains(sqlite) else {
            throw TestBedError.invalidValue(variable: "ISTHMUS_TEST_CONFIG", value: "no 'database: path: isthmus.sqlite' section")
        }
        return config.replacingOccurrences(of: sqlite, with: "\ndatabase:\n  url: \(postgres.url)\n")
    }
}
