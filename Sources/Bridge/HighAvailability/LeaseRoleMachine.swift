import IsthmusStore

/// The decisions of one process of an active/standby pair (`ha.enabled`), free of sockets, the store and clocks:
/// events and the time in, actions out (the shape of ``ComponentStateMachine``). ``LeaseKeeper`` owns it and
/// performs the actions.
///
/// standby —(poll: lease taken)→ active —(renewal refused, overdue, or a write fenced)→ lost: stop acting, exit
///         ←(poll: held by another)┘          └—(stop requested)→ stop services → release → stopped
///
/// An active process that loses the lease does not go back to standby: it stops its portals and the component at once
/// and exits (``LeaseKeeper/leaseLostExitStatus``), and its supervisor starts it again as a standby. Re-entering
/// standby inside a process whose actors are half stopped would be harder to get right than a fresh start.
public struct LeaseRoleMachine: Sendable {
    /// The timing of the lease (`ha:` in the config).
    public struct Configuration: Sendable, Equatable {
        /// How long one grant or renewal holds the lease, by the database's clock (`ha.lease_ttl_seconds`).
        public var leaseTTL: Duration
        /// How often the active process renews (`ha.renew_every_seconds`).
        public var renewEvery: Duration
        /// How often a standby tries to take the lease.
        public var pollEvery: Duration

        public init(leaseTTL: Duration = .seconds(10), renewEvery: Duration = .seconds(2), pollEvery: Duration = .seconds(1)) {
            self.leaseTTL = leaseTTL
            self.renewEvery = renewEvery
            self.pollEvery = pollEvery
        }

        /// How long after the last successful renewal (by the local monotonic clock, counted from when that renewal
        /// was sent) the active process gives up: `leaseTTL − 2 × renewEvery`, so it stops acting well before the
        /// database lets a standby take over, whatever the two hosts' clocks say.
        public var renewalDeadline: Duration { leaseTTL - renewEvery * 2 }
    }

    /// Why an active process stopped acting.
    public enum LeaseLoss: String, Sendable, Equatable {
        /// A renewal found the lease no longer ours.
        case refused
        /// No renewal succeeded within ``Configuration/renewalDeadline`` (the database is unreachable or slow).
        case overdue
        /// A write transaction was refused by the fence.
        case fenced
    }

    /// What a renewal came back with.
    public enum RenewalResult: Sendable, Equatable {
        case renewed
        /// The database said the lease is no longer ours (or it had expired).
        case refused
        /// The call failed (no answer, an error): try again until the deadline.
        case failed
    }

    /// The active process's lease.
    public struct Holding: Sendable, Equatable {
        public var grant: LeaseGrant
        /// When the last successful renewal (or the acquisition) was sent.
        public var renewedAt: ContinuousClock.Instant
        public var nextRenewal: ContinuousClock.Instant
        /// A renewal is in flight.
        public var renewing = false
        /// A graceful stop is under way: services are stopping; the lease is renewed until they have.
        public var stopping = false
    }

    public enum State: Sendable, Equatable {
        case standby(nextPoll: ContinuousClock.Instant)
        /// A `tryAcquireLease` is in flight; `stopRequested`: release whatever it brings back.
        case acquiring(stopRequested: Bool)
        case active(Holding)
        case lost(LeaseLoss)
        case stopped
    }

    public enum Action: Sendable, Equatable {
        /// Call `tryAcquireLease`, report with ``acquired(_:sentAt:now:)``.
        case tryAcquire
        /// Fence the store with the grant and start acting (component, portals, ping).
        case becomeActive(LeaseGrant)
        /// Call `renewLease`, report with ``renewalFinished(_:sentAt:now:)``.
        case renew(LeaseGrant)
        /// Stop acting at once (portals, component) and exit with ``LeaseKeeper/leaseLostExitStatus``.
        case stepDown(LeaseLoss)
        /// Stop the services gracefully, then report ``servicesStopped()``.
        case stopServices
        /// Call `releaseLease` so the standby takes over on its next poll.
        case release(LeaseGrant)
        /// Nothing more to do: the keeper ends.
        case finish
    }

    public let configuration: Configuration
    public private(set) var state: State

    /// A standby that polls at once.
    public init(configuration: Configuration, now: ContinuousClock.Instant) {
        self.configuration = configuration
        state = .standby(nextPoll: now)
    }

    /// Whether this process acts as the active instance now.
    public var isActive: Bool {
        if case .active = state { return true }
        return false
    }

    /// Time passed: poll, renew, or give up on an overdue renewal.
    public mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .standby(let nextPoll) where now >= nextPoll:
            state = .acquiring(stopRequested: false)
            return [.tryAcquire]
        case .active(var holding):
            if now - holding.renewedAt >= configuration.renewalDeadline {
                state = .lost(.overdue)
                return [.stepDown(.overdue)]
            }
            guard !holding.renewing, now >= holding.nextRenewal else { return [] }
            holding.renewing = true
            state = .active(holding)
            return [.renew(holding.grant)]
        default:
            return []
        }
    }

    /// A `tryAcquireLease` sent at `sentAt` came back with `grant` (nil: held by another, or the call failed).
    /// A grant that came back after the renewal deadline (counted from the send) is released instead of used: by then
    /// the process would have to give up acting at once, and the database may have let the grant lapse already.
    public mutating func acquired(_ grant: LeaseGrant?, sentAt: ContinuousClock.Instant, now: ContinuousClock.Instant) -> [Action] {
        guard case .acquiring(let stopRequested) = state else { return [] }
        switch (grant, stopRequested) {
        case (let grant?, false) where now - sentAt >= configuration.renewalDeadline:
            state = .standby(nextPoll: now + configuration.pollEvery)
            return [.release(grant)]
        case (let grant?, false):
            state = .active(Holding(grant: grant, renewedAt: sentAt, nextRenewal: sentAt + configuration.renewEvery))
            return [.becomeActive(grant)]
        case (nil, false):
            state = .standby(nextPoll: now + configuration.pollEvery)
            return []
        case (let grant?, true):
            state = .stopped
            return [.release(grant), .finish]
        case (nil, true):
            state = .stopped
            return [.finish]
        }
    }

    /// A renewal sent at `sentAt` finished.
    public mutating func renewalFinished(_ result: RenewalResult, sentAt: ContinuousClock.Instant,
                                         now: ContinuousClock.Instant) -> [Action] {
        guard case .active(var holding) = state else { return [] }
        holding.renewing = false
        switch result {
        case .renewed:
            holding.renewedAt = max(holding.renewedAt, sentAt)
            holding.nextRenewal = sentAt + configuration.renewEvery
        case .refused:
            state = .lost(.refused)
            return [.stepDown(.refused)]
        case .failed:
            holding.nextRenewal = now + configuration.renewEvery / 2
        }
        state = .active(holding)
        return []
    }

    /// The store refused a write: the lease is gone.
    public mutating func fenceTripped() -> [Action] {
        guard case .active = state else { return [] }
        state = .lost(.fenced)
        return [.stepDown(.fenced)]
    }

    /// SIGTERM: a standby just ends; an active process stops its services, then releases the lease.
    public mutating func stopRequested() -> [Action] {
        switch state {
        case .standby:
            state = .stopped
            return [.finish]
        case .acquiring:
            state = .acquiring(stopRequested: true)
            return []
        case .active(var holding) where !holding.stopping:
            holding.stopping = true
            state = .active(holding)
            return [.stopServices]
        default:
            return []
        }
    }

    /// The services stopped after ``Action/stopServices``: hand the lease over.
    public mutating func servicesStopped() -> [Action] {
        guard case .active(let holding) = state, holding.stopping else { return [] }
        state = .stopped
        return [.release(holding.grant), .finish]
    }
}
