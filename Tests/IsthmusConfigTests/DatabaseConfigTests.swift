import IsthmusCommon
@testable import IsthmusConfig
import TestSupport
import Testing

/// `database:`: a SQLite path (the default) or a PostgreSQL URL with a pool size — exactly one — and a URL's password
/// never shown.
@Suite struct DatabaseConfigTests {
    let url = "postgresql://isthmus:s3cret@db.example.org:5432/isthmus?sslmode=verify-full"

    @Test func aPostgresURLIsTheLocationWithTheDefaultPool() throws {
        let config = try parseConfig(ConfigFixture.minimal + "database:\n  url: \(url)\n")
        #expect(config.database.location == .postgres(url: PostgresURL(url)!, poolSize: 2))
        #expect(config.database.path == nil)
        #expect(try parseConfig(ConfigFixture.minimal + "database:\n  url: postgres://h/db\n  pool_size: 5\n").database.location
            == .postgres(url: PostgresURL("postgres://h/db")!, poolSize: 5))
    }

    @Test func withoutAURLTheLocationIsTheSQLiteFile() throws {
        let config = try parseConfig(ConfigFixture.minimal + "database:\n  path: state.sqlite\n")
        #expect(config.database.location == .sqlite(path: "/srv/isthmus/state.sqlite"))
    }

    @Test func refusesBothAWrongSchemeAndAPoolForSQLiteWithoutEchoingTheURL() {
        #expect(configError(ConfigFixture.minimal + "database:\n  url: \(url)\n  path: x.sqlite\n")?
            .hasSuffix("'database.url': give database.url (PostgreSQL) or database.path (SQLite), not both") == true)
        let wrong = configError(ConfigFixture.minimal + "database:\n  url: mysql://u:s3cret@h/db\n")
        #expect(wrong?.hasSuffix("'database.url': must be a postgresql:// or postgres:// URL") == true)
        #expect(wrong?.contains("s3cret") == false)
        #expect(configError(ConfigFixture.minimal + "database:\n  pool_size: 3\n")?
            .hasSuffix("'database.pool_size': applies to database.url (PostgreSQL) only") == true)
        #expect(configError(ConfigFixture.minimal + "database:\n  url: \(url)\n  pool_size: 0\n")?
            .hasSuffix("'database.pool_size': must be 1–64") == true)
    }

    @Test func theURLsPasswordIsRedactedWhereverItIsShown() throws {
        let location = try parseConfig(ConfigFixture.minimal + "database:\n  url: \(url)\n").database.location
        #expect("\(location)" == "postgresql://isthmus:***@db.example.org:5432/isthmus?sslmode=verify-full")
        #expect(PostgresURL("postgresql://u@h/db?password=s3cret&sslmode=require")!.description
            == "postgresql://u@h/db?sslmode=require".replacingOccurrences(of: "?", with: "?password=***&"))
        #expect(PostgresURL("postgres://h:5432/db")!.description == "postgres://h:5432/db")
        #expect(PostgresURL("postgresql://u:p@ss@h/db")!.description == "postgresql://u:***@h/db")
        // libpq's split: the userinfo ends at the first "@" before any "/", whatever "?" or "#" come before it.
        for password in ["p?ss", "p#ss", "p%ss", "p%40ss", "p@ss", "p%2Fss", "p?x=1&y@", "p:ss", "?", "#"] {
            let shown = PostgresURL("postgresql://u:\(password)@h:5432/db?sslmode=require")!.description
            #expect(shown == "postgresql://u:***@h:5432/db?sslmode=require", "password \(password)")
        }
        #expect(PostgresURL("postgresql://u:p/ss@h/db")!.description == "postgresql://u:***@h/db",
                "an unencoded slash (libpq misreads it) still hides the password")
        #expect(PostgresURL("postgresql://h/db?user=u&password=a@b?c")!.description == "postgresql://h/db?user=u&password=***",
                "an \"@\" in the query is not a userinfo")
        #expect(PostgresURL("postgresql://u@h/db")!.description == "postgresql://u@h/db")
        #expect(PostgresURL("postgresql://") == nil)
        #expect(PostgresURL("postgresql://u:p w@h/db") == nil)
    }
}
