import Foundation
import Testing

extension Trait where Self == ConditionTrait {
    /// For a real-server suite that lives in a target of the unit and loopback tiers (beside the code it tests, as
    /// `IsthmusStoreTests.PostgresConnectionRealServerTests`): it runs only when the test bed's PostgreSQL is configured
    /// (`ISTHMUS_TEST_POSTGRES_URL`, which `scripts/test` always sets, so CI runs it) and is skipped, saying why,
    /// elsewhere — `swift test` on its own, `scripts/sanitize`. The real-server targets themselves are left out by
    /// name (`scripts/sanitize`); this trait is how the others are.
    ///
    /// Under `scripts/test` (which exports `ISTHMUS_TEST_DATABASE`) it always runs, so a bed whose PostgreSQL URL went
    /// missing fails the run with `TestBedError.postgresNotConfigured` instead of skipping it in CI.
    public static var needsTestBedPostgres: Self {
        let environment = ProcessInfo.processInfo.environment
        let underScriptsTest = !(environment["ISTHMUS_TEST_DATABASE"] ?? "").isEmpty
        return .enabled(if: underScriptsTest || (try? TestBed.postgresURL(environment)) != nil,
                        "needs the test bed's PostgreSQL (ISTHMUS_TEST_POSTGRES_URL): run it through scripts/test")
    }
}
