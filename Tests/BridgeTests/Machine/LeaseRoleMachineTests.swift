import Bridge
import IsthmusStore
import Testing

/// The active/standby decisions with literal events and injected time (ttl 10 s, renewal every 2 s, poll every 1 s).
@Suite struct LeaseRoleMachineTests {
    let t0 = ContinuousClock.now
    let grant = LeaseGrant(owner: LeaseOwner("a-1")!, epoch: 3, expiresMs: 0)

    func at(_ seconds: Double) -> ContinuousClock.Instant { t0 + .milliseconds(Int(seconds * 1000)) }

    /// A machine that took the lease with a call sent at t0.
    func active() -> LeaseRoleMachine {
        var machine = LeaseRoleMachine(configuration: .init(), now: t0)
        _ = machine.tick(now: t0)
        _ = machine.acquired(grant, sentAt: t0, now: at(0.01))
        return machine
    }

    @Test func theRenewalDeadlineIsTheTTLLessTwoRenewals() {
        #expect(LeaseRoleMachine.Configuration().renewalDeadline == .seconds(6))
    }

    @Test func aStandbyPollsEverySecondUntilTheLeaseIsFree() {
        var machine = LeaseRoleMachine(configuration: .init(), now: t0)
        #expect(machine.tick(now: t0) == [.tryAcquire])
        #expect(machine.tick(now: at(0.5)) == [], "one call in flight at a time")
        #expect(machine.acquired(nil, sentAt: t0, now: at(0.1)) == [])
        #expect(machine.state == .standby(nextPoll: at(1.1)))
        #expect(machine.tick(now: at(1.0)) == [])
        #expect(machine.tick(now: at(1.1)) == [.tryAcquire])
        #expect(machine.acquired(grant, sentAt: at(1.1), now: at(1.2)) == [.becomeActive(grant)])
        #expect(machine.isActive)
    }

    @Test func aGrantThatCameBackAfterTheRenewalDeadlineIsReleasedNotUsed() {
        var machine = LeaseRoleMachine(configuration: .init(), now: t0)
        _ = machine.tick(now: t0)
        #expect(machine.acquired(grant, sentAt: t0, now: at(6.0)) == [.release(grant)],
                "an answer 6 s (the renewal deadline) after the send is too late to act on")
        #expect(!machine.isActive)
        #expect(machine.state == .standby(nextPoll: at(7.0)))
        #expect(machine.tick(now: at(7.0)) == [.tryAcquire])
        #expect(machine.acquired(grant, sentAt: at(7.0), now: at(12.9)) == [.becomeActive(grant)],
                "just inside the deadline it is used")
    }

    @Test func theActiveProcessRenewsEveryTwoSecondsCountedFromTheSend() {
        var machine = active()
        #expect(machine.tick(now: at(1.9)) == [])
        #expect(machine.tick(now: at(2.0)) == [.renew(grant)])
        #expect(machine.tick(now: at(2.5)) == [], "one renewal in flight at a time")
        #expect(machine.renewalFinished(.renewed, sentAt: at(2.0), now: at(2.6)) == [])
        #expect(machine.tick(now: at(3.9)) == [])
        #expect(machine.tick(now: at(4.0)) == [.renew(grant)])
    }

    @Test func aRefusedRenewalStepsDownAtOnce() {
        var machine = active()
        _ = machine.tick(now: at(2.0))
        #expect(machine.renewalFinished(.refused, sentAt: at(2.0), now: at(2.1)) == [.stepDown(.refused)])
        #expect(machine.state == .lost(.refused))
        #expect(machine.tick(now: at(4.0)) == [], "a lost process renews nothing")
        #expect(machine.stopRequested() == [], "nothing to release: it is not ours")
    }

    @Test func failedRenewalsAreRetriedUntilTheDeadlineThenItStepsDown() {
        var machine = active()
        #expect(machine.tick(now: at(2.0)) == [.renew(grant)])
        #expect(machine.renewalFinished(.failed, sentAt: at(2.0), now: at(2.2)) == [])
        #expect(machine.tick(now: at(3.1)) == [], "retried after half a renewal period")
        #expect(machine.tick(now: at(3.2)) == [.renew(grant)])
        #expect(machine.renewalFinished(.failed, sentAt: at(3.2), now: at(3.3)) == [])
        #expect(machine.tick(now: at(4.3)) == [.renew(grant)])
        #expect(machine.tick(now: at(5.9)) == [], "the third is still in flight")
        #expect(machine.tick(now: at(6.0)) == [.stepDown(.overdue)], "6 s after the acquisition was sent")
        #expect(machine.state == .lost(.overdue))
    }

    @Test func aRenewalThatHangsStillMeetsTheDeadline() {
        var machine = active()
        #expect(machine.tick(now: at(2.0)) == [.renew(grant)])
        #expect(machine.tick(now: at(5.99)) == [])
        #expect(machine.tick(now: at(6.0)) == [.stepDown(.overdue)])
        #expect(machine.renewalFinished(.renewed, sentAt: at(2.0), now: at(6.5)) == [], "too late: it stays lost")
        #expect(machine.state == .lost(.overdue))
    }

    @Test func aSuccessfulRenewalMovesTheDeadline() {
        var machine = active()
        _ = machine.tick(now: at(2.0))
        _ = machine.renewalFinished(.renewed, sentAt: at(2.0), now: at(5.0))
        #expect(machine.tick(now: at(6.0)) == [.renew(grant)], "the deadline is now 8 s")
        #expect(machine.tick(now: at(8.0)) == [.stepDown(.overdue)])
    }

    @Test func aFencedWriteStepsDown() {
        var machine = active()
        #expect(machine.fenceTripped() == [.stepDown(.fenced)])
        #expect(machine.fenceTripped() == [])
        var standby = LeaseRoleMachine(configuration: .init(), now: t0)
        #expect(standby.fenceTripped() == [], "a standby writes nothing that could be fenced")
    }

    @Test func aGracefulStopStopsServicesKeepsRenewingThenReleases() {
        var machine = active()
        #expect(machine.stopRequested() == [.stopServices])
        #expect(machine.stopRequested() == [], "asked twice, done once")
        #expect(machine.tick(now: at(2.0)) == [.renew(grant)], "the lease is kept while services stop")
        #expect(machine.renewalFinished(.renewed, sentAt: at(2.0), now: at(2.1)) == [])
        #expect(machine.servicesStopped() == [.release(grant), .finish])
        #expect(machine.state == .stopped)
    }

    @Test func aStandbyStopsAtOnce() {
        var machine = LeaseRoleMachine(configuration: .init(), now: t0)
        #expect(machine.stopRequested() == [.finish])
        #expect(machine.tick(now: at(5)) == [])
    }

    @Test func aStopDuringAnAcquisitionReleasesWhatItBrings() {
        var machine = LeaseRoleMachine(configuration: .init(), now: t0)
        _ = machine.tick(now: t0)
        #expect(machine.stopRequested() == [])
        #expect(machine.acquired(grant, sentAt: t0, now: at(0.1)) == [.release(grant), .finish])
        var other = LeaseRoleMachine(configuration: .init(), now: t0)
        _ = other.tick(now: t0)
        _ = other.stopRequested()
        #expect(other.acquired(nil, sentAt: t0, now: at(0.1)) == [.finish])
    }
}
