import Foundation
import IsthmusCommon
import IsthmusStore

/// The store backends a store test runs on: SQLite always, and the test bed's PostgreSQL when `scripts/test` started
/// one (`ISTHMUS_TEST_POSTGRES_URL`). Store tests take one as their argument (`@Test(arguments: StoreBackend.all)`),
/// so one test body checks both.
public enum StoreBackend: String, Sendable, CaseIterable, CustomStringConvertible {
    case sqlite
    case postgres

    /// SQLite, plus PostgreSQL when the bed has one: `scripts/test` (and so CI) always starts it; the unit tier run on
    /// its own (`swift test --skip …`, `scripts/sanitize`) has none and checks SQLite.
    public static var all: [StoreBackend] {
        (try? TestBed.postgresURL()) != nil ? [.sqlite, .postgres] : [.sqlite]
    }

    public var description: String { rawValue }

    /// A fresh, empty store: an in-memory SQLite database (or, `persistent`, a file in a temporary folder), or a new
    /// PostgreSQL database of its own on the bed. Does its blocking I/O (`psql`, the migrations) on a Dispatch thread,
    /// never on the cooperative pool: dozens of store tests start at once, and PostgreSQL creates databases one at a
    /// time, so blocking there stalled every other test for half a minute (loopback tests with keepalives then failed).
    public func open(persistent: Bool = false, logger: Logger = .disabled) async throws -> StoreFixture {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try self.openBlocking(persistent: persistent, logger: logger) })
            }
        }
    }

    private func openBlocking(persistent: Bool, logger: Logger) throws -> StoreFixture {
        switch self {
        case .sqlite:
            let directory = persistent ? try TemporaryDirectory() : nil
            let location = DatabaseLocation.sqlite(path: directory?.path("isthmus.sqlite") ?? ":memory:")
            return StoreFixture(location: location, store: try Store(location: location, logger: logger), keepAlive: directory)
        case .postgres:
            let database = try PostgresTestDatabase()
            guard let url = PostgresURL(database.url) else { throw TestBedError.invalidValue(variable: "url", value: database.url) }
            let location = DatabaseLocation.postgres(url: url, poolSize: 2)
            return StoreFixture(location: location, store: try Store(location: location, logger: logger), keepAlive: database)
        }
    }
}

/// A store opened for one test, with what keeps its database alive (the temporary folder, or the PostgreSQL test
/// database that is dropped when this is released).
public final class StoreFixture: Sendable {
    /// Where the database is (to open it again: ``reopen(logger:)``).
    public let location: DatabaseLocation
    /// The store, migrated.
    public let store: Store
    private let keepAlive: (any Sendable)?

    init(location: DatabaseLocation, store: Store, keepAlive: (any Sendable)?) {
        self.location = location
        self.store = store
        self.keepAlive = keepAlive
    }

    /// Another store on the same database (as after a restart, or a second process). Blocks on I/O.
    public func reopen(logger: Logger = .disabled) throws -> Store {
        try Store(location: location, logger: logger)
    }

    /// The PostgreSQL test database, for tests that act on the server (`pg_terminate_backend`); nil for SQLite.
    public var postgresDatabase: PostgresTestDatabase? { keepAlive as? PostgresTestDatabase }
}
