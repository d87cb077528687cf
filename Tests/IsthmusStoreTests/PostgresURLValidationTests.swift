import IsthmusCommon
@testable import IsthmusStore
import Testing

/// A bad `database.url` is refused with which part is wrong, never with the URL or its password; connect errors are
/// scrubbed of both. No server needed (libpq parses locally; the connect goes to a closed port).
@Suite struct PostgresURLValidationTests {
    @Test(arguments: [
        ("postgresql://u:p%zzsecret@h/db", "percent-encoded"),
        ("postgresql://u:p%00secret@h/db", "percent-encoded"),
        ("postgresql://u:secret@h/db?sslmode", "query parameter"),
        ("postgresql://u:secret@h/db?nosuchoption=1", "unknown query parameter"),
        ("postgresql://u:secret@[::1/db", "IPv6"),
    ])
    func aBadURLIsRefusedWithoutQuotingIt(url: String, part: String) throws {
        let error = #expect(throws: PostgresConnection.InvalidURL.self) { try PostgresConnection.validate(url) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.hasPrefix("database.url is not a valid PostgreSQL connection URI: "))
        #expect(text.contains(part), "\(text)")
        #expect(!text.contains("secret") && !text.contains("%zz"), "\(text)")
    }

    @Test func theStoreRefusesABadURLWithTheFixedMessage() throws {
        let location = DatabaseLocation.postgres(url: PostgresURL("postgresql://u:p%zzsecret@h/db")!)
        let error = #expect(throws: StoreError.self) { try Store(location: location, logger: .disabled) }
        #expect(error?.message.hasPrefix("database.url is not a valid PostgreSQL connection URI: a percent-encoded") == true)
        #expect(error?.message.contains("secret") == false)
    }

    @Test func aGoodURLYieldsItsPasswordDecoded() throws {
        #expect(try PostgresConnection.validate("postgresql://u:p%40ss%2Fw?rd@h/db") == "p@ss/w?rd")
        #expect(try PostgresConnection.validate("postgresql://h/db?password=q%26r") == "q&r")
        #expect(try PostgresConnection.validate("postgresql://u@h/db") == nil)
    }

    @Test func connectErrorsAreScrubbedOfTheURLAndThePassword() throws {
        let url = "postgresql://u:p%40ss@h/db"
        let message = "could not connect to \(url): password p@ss or p%40ss refused"
        #expect(PostgresConnection.scrubbed(message, url: url, password: "p@ss")
                == "could not connect to ***: password *** or *** refused")
        // A real connect failure (a closed port) carries neither.
        let refused = "postgresql://u:s3cr%2Ft@127.0.0.1:1/db?connect_timeout=2"
        let error = #expect(throws: PostgresError.self) { try PostgresConnection(url: refused) }
        let text = error.map { "\($0)" } ?? ""
        #expect(text.contains("cannot connect to PostgreSQL"), "\(text)")
        #expect(!text.contains("s3cr") && !text.contains(refused), "\(text)")
    }
}
