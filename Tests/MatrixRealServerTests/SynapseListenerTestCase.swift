import TestSupport
import XCTest

/// A test case with the appservice listener running against the test bed's Synapse for each test.
class SynapseListenerTestCase: XCTestCase {
    var harness: SynapseHarness!

    override func setUp() async throws {
        harness = try SynapseHarness(bed: try TestBed.fromEnvironment())
        try await harness.startListener()
    }

    override func tearDown() async throws {
        await harness?.stopListener()
        harness?.removeStore()
    }
}
