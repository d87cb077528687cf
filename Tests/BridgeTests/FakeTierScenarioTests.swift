import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import TestSupport

/// The shared scenarios (TestSupport's ``BridgeScenarios``) on the fake tier; `EndToEndTests.ScenarioTests` runs the
/// same bodies against real servers.
@Suite struct FakeTierScenarioTests {
    @Test func textBothWaysOnce() async throws {
        let pair = FakeScenarioPair()
        try await pair.start()
        try await BridgeScenarios.textBothWaysOnce(pair)
        try await pair.finish()
    }

    @Test func downtimeIsCaughtUpOnceInOrder() async throws {
        let pair = FakeScenarioPair()
        try await pair.start()
        try await BridgeScenarios.downtimeIsCaughtUpOnceInOrder(pair)
        try await pair.finish()
    }
}
