@testable import IsthmusCLI
import IsthmusCommon
import IsthmusStore
import Testing

/// `doctor`'s line about the active/standby lease.
@Suite struct LeaseDoctorTests {
    let owner = LeaseOwner("host-a-12-9f3c")!

    @Test func aHeldLeaseNamesTheActiveInstance() {
        let held = LeaseState(owner: owner, epoch: 4, expiresMs: 10_000, databaseNowMs: 2_450)
        #expect(LeaseDoctor.findings(held, haEnabled: true)
            == [DoctorFinding(ok: true, check: "Bridge lease", detail: "held by host-a-12-9f3c (epoch 4) for another 7.6 s: that instance is active")])
        #expect(LeaseDoctor.findings(held, haEnabled: false).first?.warning == true, "a pair member runs here while ha is off")
    }

    @Test func aFreeLeaseIsAWarningOnlyForAPair() {
        let free = LeaseState(owner: owner, epoch: 4, expiresMs: 10_000, databaseNowMs: 12_000)
        #expect(LeaseDoctor.findings(free, haEnabled: true).map(\.detail)
            == ["free (last held by host-a-12-9f3c, epoch 4, 2.0 s ago): no instance is active; a standby takes it within a second"])
        #expect(LeaseDoctor.findings(free, haEnabled: false).isEmpty)
        let never = LeaseState(owner: nil, epoch: 0, expiresMs: 0, databaseNowMs: 12_000)
        #expect(LeaseDoctor.findings(never, haEnabled: false).isEmpty)
        #expect(LeaseDoctor.findings(never, haEnabled: true).map(\.warning) == [true])
    }
}
