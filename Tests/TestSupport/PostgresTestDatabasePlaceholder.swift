import Foundation

// PLACEHOLDER until branch p1 (the test bed's PostgreSQL) is merged: P1's API, so the store tests compile. Deleted by
// the merge commit.
public final class PostgresTestDatabase: Sendable {
    public let name = ""
    public let url = ""
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        throw TestBedError.invalidValue(variable: "ISTHMUS_TEST_POSTGRES_URL", value: "")
    }
    public func runAsAdministrator(_ command: String) throws {}
}

extension TestBed {
    public static func postgresURL(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        guard let url = environment["ISTHMUS_TEST_POSTGRES_URL"], !url.isEmpty else {
            throw TestBedError.invalidValue(variable: "ISTHMUS_TEST_POSTGRES_URL", value: "")
        }
        return url
    }
}
