@testable import MatrixAppService
import Testing

/// Which connections the HTTP server closes under pressure, as chains of events and actions with injected time.
@Suite struct ConnectionPolicyTests {
    let t0 = ContinuousClock.now
    static let limits = ConnectionPolicy.Limits(total: 4, unauthenticatedPerAddress: 3, unauthenticatedTimeout: .seconds(10))

    func id(_ number: UInt) -> ConnectionPolicy.ID { ConnectionPolicy.ID(rawValue: number) }

    @Test func aNewcomerAboveTheLimitClosesTheOldestUnauthenticatedIdleConnection() {
        var policy = ConnectionPolicy(limits: Self.limits)
        #expect(policy.opened(id(1), address: "a", now: t0) == [])
        #expect(policy.opened(id(2), address: "b", now: t0 + .seconds(1)) == [])
        #expect(policy.opened(id(3), address: "c", now: t0 + .seconds(2)) == [])
        #expect(policy.opened(id(4), address: "d", now: t0 + .seconds(3)) == [])
        #expect(policy.opened(id(5), address: "e", now: t0 + .seconds(4)) == [.close(id(1), address: "a", .connectionLimit)])
        #expect(policy.openCount == 4)
        #expect(!policy.isOpen(id(1)))
        policy.closed(id(1))
        #expect(policy.opened(id(6), address: "f", now: t0 + .seconds(5)) == [.close(id(2), address: "b", .connectionLimit)])
    }

    @Test func theHomeserverSharingAnAddressWithAttackersIsNeverLockedOut() {
        var policy = ConnectionPolicy(limits: Self.limits)
        for number in UInt(1)...3 { #expect(policy.opened(id(number), address: "127.0.0.1", now: t0) == []) }
        // Above three idle strangers from one address, the oldest goes — the newcomer (perhaps the homeserver) stays.
        #expect(policy.opened(id(4), address: "127.0.0.1", now: t0 + .seconds(1)) == [.close(id(1), address: "127.0.0.1", .addressLimit)])
        #expect(policy.requestStarted(id(4), authenticated: true) == [.extendTimeout(id(4))])
        // Authenticated connections do not count against the address; more strangers push out strangers only.
        for number in UInt(5)...20 {
            let actions = policy.opened(id(number), address: "127.0.0.1", now: t0 + .seconds(Int64(number)))
            #expect(!actions.contains { if case .close(id(4), _, _) = $0 { true } else { false } })
        }
        #expect(policy.isOpen(id(4)))
        policy.requestFinished(id(4), now: t0 + .seconds(30))
        #expect(policy.isOpen(id(4)))
    }

    @Test func connectionsInARequestAreNeverClosedAndIdleAuthenticatedOnesGoBeforeTheNewcomer() {
        var policy = ConnectionPolicy(limits: Self.limits)
        for number in UInt(1)...4 {
            _ = policy.opened(id(number), address: "hs", now: t0)
            #expect(policy.requestStarted(id(number), authenticated: true) == [.extendTimeout(id(number))])
        }
        // All four busy: the newcomer itself is refused.
        #expect(policy.opened(id(5), address: "x", now: t0 + .seconds(1)) == [.close(id(5), address: "x", .connectionLimit)])
        policy.closed(id(5))
        // Two become idle; the one idle the longest goes first.
        policy.requestFinished(id(3), now: t0 + .seconds(2))
        policy.requestFinished(id(2), now: t0 + .seconds(3))
        #expect(policy.opened(id(6), address: "x", now: t0 + .seconds(4)) == [.close(id(3), address: "hs", .connectionLimit)])
        // A second request on an authenticated connection does not extend again.
        #expect(policy.requestStarted(id(2), authenticated: true) == [])
    }

    @Test func unauthenticatedConnectionsExpireEvenWhileTrickling() {
        var policy = ConnectionPolicy(limits: Self.limits)
        _ = policy.opened(id(1), address: "a", now: t0)
        _ = policy.opened(id(2), address: "hs", now: t0)
        _ = policy.requestStarted(id(2), authenticated: true)
        policy.requestFinished(id(2), now: t0 + .seconds(1))
        _ = policy.opened(id(3), address: "b", now: t0 + .seconds(5))
        _ = policy.requestStarted(id(3), authenticated: false)  // a health probe in progress
        #expect(policy.expire(now: t0 + .seconds(9)) == [])
        #expect(policy.expire(now: t0 + .seconds(10)) == [.close(id(1), address: "a", .unauthenticatedTimeout)])
        #expect(policy.expire(now: t0 + .seconds(11)) == [])  // already closing
        policy.requestFinished(id(3), now: t0 + .seconds(12))
        #expect(policy.expire(now: t0 + .seconds(21)) == [])
        #expect(policy.expire(now: t0 + .seconds(22)) == [.close(id(3), address: "b", .unauthenticatedTimeout)])
        #expect(policy.isOpen(id(2)))
    }

    @Test func inABurstConnectionsWhoseHeadIsOnItsWayAreClosedLast() {
        var policy = ConnectionPolicy(limits: .init(total: 4, unauthenticatedPerAddress: 10, unauthenticatedTimeout: .seconds(10)))
        _ = policy.opened(id(1), address: "hs", now: t0)  // head arrived, not yet read by the library
        _ = policy.opened(id(2), address: "x", now: t0 + .seconds(1))  // silent
        _ = policy.opened(id(3), address: "hs", now: t0 + .seconds(2))
        _ = policy.opened(id(4), address: "hs", now: t0 + .seconds(3))
        let sending: Set<ConnectionPolicy.ID> = [id(1), id(3), id(4), id(5), id(6)]
        // The silent stranger goes first although it is not the oldest…
        #expect(policy.opened(id(5), address: "hs", now: t0 + .seconds(4)) { sending.contains($0) }
                == [.close(id(2), address: "x", .connectionLimit)])
        // …then, all sending, the oldest.
        #expect(policy.opened(id(6), address: "hs", now: t0 + .seconds(5)) { sending.contains($0) }
                == [.close(id(1), address: "hs", .connectionLimit)])
    }
}
