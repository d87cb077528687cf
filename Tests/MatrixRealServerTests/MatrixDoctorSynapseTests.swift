import Foundation
import IsthmusCLI
import IsthmusCommon
import IsthmusConfig
import TestSupport
import XCTest

/// `MatrixDoctor` against the test bed: every check passes with the bed's config, with and without a listener
/// already running, and a wrong as_token is said plainly.
final class MatrixDoctorSynapseTests: XCTestCase {
    func testDoctorPassesStartingItsOwnListener() async throws {
        let bed = try TestBed.fromEnvironment()
        let config = try Config.load(path: bed.configFile.path, environment: [:])
        let findings = await MatrixDoctor.check(config: config, logger: .disabled)
        XCTAssertEqual(findings.map(\.check), ["matrix.homeserver", "matrix.as_token", "matrix.appservice_ping"])
        XCTAssertTrue(findings.allSatisfy(\.ok), "\(findings)")
        XCTAssertTrue(findings.last?.detail.contains("a listener started for the check") ?? false, "\(findings)")
    }

    func testDoctorPingsTheListenerAlreadyRunning() async throws {
        let harness = try SynapseHarness(bed: try TestBed.fromEnvironment())
        try await harness.startListener()
        defer { harness.removeStore() }
        let config = try Config.load(path: harness.bed.configFile.path, environment: [:])
        let findings = await MatrixDoctor.check(config: config, logger: .disabled)
        await harness.stopListener()
        XCTAssertTrue(findings.allSatisfy(\.ok), "\(findings)")
        XCTAssertTrue(findings.last?.detail.contains("already running") ?? false, "\(findings)")
    }

    func testDoctorSaysPlainlyThatTheASTokenIsRefused() async throws {
        let bed = try TestBed.fromEnvironment()
        var config = try Config.load(path: bed.configFile.path, environment: [:])
        config.appservice.asToken = "wrong-token"
        let findings = await MatrixDoctor.check(config: config, logger: .disabled)
        XCTAssertEqual(findings.map(\.ok), [true, false])
        guard findings.count == 2 else { return }
        XCTAssertTrue(findings[1].detail.contains("does not know this as_token"), findings[1].detail)
    }
}
