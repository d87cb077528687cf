import IsthmusConfig
import IsthmusCommon
import IsthmusStore

/// Holds the bridge lease for one process of an active/standby pair (`ha.enabled`): polls for it as a standby,
/// renews it while active, releases it on a graceful stop. It owns a ``LeaseRoleMachine`` and performs its store
/// actions; what the rest of the process must do (start acting, stop at once, stop gracefully) it hands out as
/// ``Command``s on ``commands``, which ``BridgeRuntime`` follows.
///
/// ``run()`` is the one loop that feeds the machine, in the swift-service-lifecycle shape: it returns once the machine
/// finishes (after a release) or steps down. Store calls run in child tasks, so a hung database delays no deadline:
/// a ticker drives the machine every ``tick`` by the monotonic clock whatever the store does.
public final class LeaseKeeper: Sendable {
    /// The exit status of a process that lost the lease while active (EX_TEMPFAIL): not a crash, a hand-over; the
    /// supervisor (systemd `Restart=always`) starts it again, as a standby. See docs/deploy.md.
    public static let leaseLostExitStatus: Int32 = 75

    /// What the runtime must do.
    public enum Command: Sendable, Equatable {
        /// The store is fenced with the grant: connect the component, run the portals, ping the homeserver.
        case becomeActive(LeaseGrant)
        /// The lease is gone: stop acting at once and exit with ``leaseLostExitStatus``.
        case stepDown(LeaseRoleMachine.LeaseLoss)
        /// Stop every service, then call ``servicesStopped()`` (the lease is released after that).
        case stopServices
    }

    enum Event: Sendable {
        case tick
        /// `error`: the call failed (the machine sees no grant; the loop logs it, rate-limited).
        case acquired(LeaseGrant?, sentAt: ContinuousClock.Instant, error: StoreError? = nil)
        case renewed(LeaseRoleMachine.RenewalResult, sentAt: ContinuousClock.Instant)
        case fenceTripped
        case stopRequested
        case servicesStopped
    }

    /// How often the machine is asked what time demands.
    public let tick: Duration
    /// What the process must do, in order; finishes when ``run()`` returns.
    public let commands: AsyncStream<Command>
    private let commandSink: AsyncStream<Command>.Continuation
    private let events: AsyncStream<Event>
    private let eventSink: AsyncStream<Event>.Continuation
    private let store: Store
    private let owner: LeaseOwner
    private let configuration: LeaseRoleMachine.Configuration
    private let timeSource: TimeSource
    private let logger: Logger

    public init(store: Store, owner: LeaseOwner, configuration: LeaseRoleMachine.Configuration,
                timeSource: TimeSource = .system, tick: Duration = Config.HighAvailability.leaseTick, logger: Logger) {
        self.store = store
        self.owner = owner
        self.configuration = configuration
        self.timeSource = timeSource
        self.tick = tick
        self.logger = logger
        (commands, commandSink) = AsyncStream.makeStream(of: Command.self)
        (events, eventSink) = AsyncStream.makeStream(of: Event.self)
    }

    /// SIGTERM: a standby ends; an active process gets ``Command/stopServices``. Any thread.
    public func stopRequested() { eventSink.yield(.stopRequested) }

    /// The services stopped after ``Command/stopServices``: the lease is released and ``run()`` returns. Any thread.
    public func servicesStopped() { eventSink.yield(.servicesStopped) }

    /// Runs the machine until it finishes or steps down (see the type's comment). Call once.
    public func run() async {
        logger.info("Standing by for the bridge lease", metadata: ["ha.owner": owner.description])
        var machine = LeaseRoleMachine(configuration: configuration, now: timeSource.now())
        var pollFailures = 0
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                while (try? await Task.sleep(for: tick)) != nil { eventSink.yield(.tick) }
            }
            loop: for await event in events {
                let now = timeSource.now()
                let actions: [LeaseRoleMachine.Action]
                switch event {
                case .tick: actions = machine.tick(now: now)
                case .acquired(let grant, let sentAt, let error):
                    pollFailures = error == nil ? 0 : pollFailures + 1
                    if let error, pollFailures % 60 == 1 {  // the first, then one a minute while the database is away
                        logger.warning("Could not poll the bridge lease", metadata: [
                            "error": error.message, "ha.poll_failures": String(pollFailures),
                        ])
                    }
                    actions = machine.acquired(grant, sentAt: sentAt, now: now)
                case .renewed(let result, let sentAt): actions = machine.renewalFinished(result, sentAt: sentAt, now: now)
                case .fenceTripped: actions = machine.fenceTripped()
                case .stopRequested: actions = machine.stopRequested()
                case .servicesStopped: actions = machine.servicesStopped()
                }
                for action in actions {
                    if await perform(action, in: &group) == .done { break loop }
                }
            }
            group.cancelAll()
        }
        commandSink.finish()
    }

    private enum Progress { case going, done }

    private func perform(_ action: LeaseRoleMachine.Action, in group: inout TaskGroup<Void>) async -> Progress {
        switch action {
        case .tryAcquire:
            group.addTask { [self] in
                let sentAt = timeSource.now()
                do {
                    eventSink.yield(.acquired(try await store.tryAcquireLease(owner: owner, ttl: configuration.leaseTTL), sentAt: sentAt))
                } catch let error as StoreError {
                    eventSink.yield(.acquired(nil, sentAt: sentAt, error: error))
                } catch {
                    eventSink.yield(.acquired(nil, sentAt: sentAt, error: StoreError(.other, "\(error)")))
                }
            }
        case .becomeActive(let grant):
            await store.fence(with: grant)
            logger.notice("Bridge lease acquired; this instance is active", metadata: [
                "ha.owner": owner.description, "ha.epoch": String(grant.epoch),
            ])
            group.addTask { [self] in await watchFence() }
            commandSink.yield(.becomeActive(grant))
        case .renew(let grant):
            group.addTask { [self] in
                let sentAt = timeSource.now()
                do {
                    let renewed = try await store.renewLease(grant, ttl: configuration.leaseTTL)
                    eventSink.yield(.renewed(renewed ? .renewed : .refused, sentAt: sentAt))
                } catch {
                    eventSink.yield(.renewed(.failed, sentAt: sentAt))
                    logger.warning("Could not renew the bridge lease; retrying", metadata: ["error": "\(error)"])
                }
            }
        case .stepDown(let loss):
            logger.error("Bridge lease lost; this instance stops acting and exits", metadata: [
                "ha.owner": owner.description, "ha.loss": loss.rawValue,
                "ha.exit_status": String(Self.leaseLostExitStatus),
            ])
            commandSink.yield(.stepDown(loss))
            return .done
        case .stopServices:
            commandSink.yield(.stopServices)
        case .release(let grant):
            do {
                try await store.releaseLease(grant)
                logger.notice("Bridge lease released", metadata: ["ha.owner": owner.description, "ha.epoch": String(grant.epoch)])
            } catch {
                logger.warning("Could not release the bridge lease; it expires by itself", metadata: ["error": "\(error)"])
            }
        case .finish:
            return .done
        }
        return .going
    }

    /// Reports the first write the fence refuses (checked every ``tick``, apart from the ticker so a busy store
    /// never holds up the deadline).
    private func watchFence() async {
        while (try? await Task.sleep(for: tick)) != nil {
            if await store.fenceTripped {
                eventSink.yield(.fenceTripped)
                return
            }
        }
    }
}
