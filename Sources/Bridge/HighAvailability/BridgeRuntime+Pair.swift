import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
#if canImport(Glibc)
import Glibc
#endif

extension BridgeRuntime {
    /// The active process lost the bridge lease and stopped acting: `serve` exits with
    /// ``LeaseKeeper/leaseLostExitStatus`` so its supervisor starts it again as a standby.
    public struct LeaseLost: Error, Sendable, CustomStringConvertible {
        public let loss: LeaseRoleMachine.LeaseLoss
        public var description: String { "the bridge lease was lost (\(loss.rawValue)); this instance stopped acting" }
    }

    /// One process of an active/standby pair (`ha.enabled`). It starts as the standby: the appservice listener
    /// answers 503 (but its health probe), `/ready` answers 503 `standby`, nothing else runs, and the
    /// ``LeaseKeeper`` polls the lease. Once it holds the lease the store is fenced and the acting services start
    /// (component, portals, homeserver ping, which makes Synapse retry what it backed off on; the portals catch up
    /// as after a restart). `stop` stops the services, then releases the lease so the standby takes over at once.
    /// Losing the lease stops acting at once and throws ``LeaseLost``.
    func runInPair(_ parts: Parts, until stop: AsyncStream<Void>) async throws {
        let owner = Self.leaseOwner(instanceName: config.ha.instanceName)
        let keeper = LeaseKeeper(
            store: parts.store, owner: owner,
            configuration: .init(leaseTTL: config.ha.leaseTTL, renewEvery: config.ha.renewEvery),
            logger: logger.with(label: "ha"))
        let logger = self.logger
        let running = RunningServices()
        let (stopActing, stopActingSink) = AsyncStream.makeStream(of: Void.self)
        var lost: LeaseRoleMachine.LeaseLoss?
        var stopping = false
        if let state = try? await parts.store.currentLease(), state.isHeld, let holder = state.owner {
            logger.info("Another instance holds the bridge lease", metadata: [
                "ha.holder": holder.description, "ha.epoch": String(state.epoch),
                "ha.remaining_ms": String(state.expiresMs - state.databaseNowMs),
            ])
        }
        await withTaskGroup(of: Void.self) { group in
            addListeningServices(&group, running, parts)
            running.add(&group, "bridge lease") { await keeper.run() }
            running.add(&group, "signals") { [shutdownDeadline] in
                for await _ in stop {
                    // Armed here for both roles: a standby's stop waits for an acquire in flight, which a database
                    // that stopped answering could hold up (the active role arms it again on stopServices; the first
                    // deadline to pass decides).
                    running.exitIfStillRunning(after: shutdownDeadline, logger: logger)
                    keeper.stopRequested()
                    break
                }
            }
            for await command in keeper.commands {
                switch command {
                case .becomeActive:
                    parts.metrics.health.setStandby(false)
                    parts.listener?.becomeActive()
                    running.add(&group, "acting services") { [self] in
                        await withTaskGroup(of: Void.self) { acting in
                            addActingServices(&acting, running, parts)
                            for await _ in stopActing { break }
                            parts.bridge.shutdown()
                            await parts.component.close()
                            acting.cancelAll()
                        }
                        keeper.servicesStopped()
                    }
                case .stopServices:
                    stopping = true
                    logger.info("Isthmus stopping")
                    running.exitIfStillRunning(after: shutdownDeadline, logger: logger)
                    parts.stopListening()
                    stopActingSink.yield()
                case .stepDown(let loss):
                    lost = loss
                    stopping = true
                    // Portals and the component stop now; whatever hangs is cut short by the exit.
                    running.exitIfStillRunning(after: Config.HighAvailability.stepDownWatchdog, logger: logger) { _ in
                        RunningServices.exitNow(LeaseKeeper.leaseLostExitStatus)
                    }
                    parts.stopListening()
                    stopActingSink.yield()
                }
            }
            // The keeper finished: the lease released after a graceful stop, a step-down, or a standby asked to stop.
            if !stopping {
                logger.info("Isthmus stopping")
                running.exitIfStillRunning(after: shutdownDeadline, logger: logger)
            }
            parts.stopListening()
            stopActingSink.finish()
            group.cancelAll()
        }
        // Last: no store call may follow (the shutdown watchdog still covers it).
        await parts.store.close()
        running.markStopped()
        if let lost { throw LeaseLost(loss: lost) }
        logger.info("Isthmus stopped")
    }

    /// This process's owner token: the instance name (default: host name and process id) and 4 random bytes, so a
    /// restarted process with the same name is a new owner.
    static func leaseOwner(instanceName: String?) -> LeaseOwner {
        let name = instanceName ?? "\(hostName())-\(getpid())"
        return LeaseOwner("\(name)-\(Digest.randomHex(bytes: 4))") ?? LeaseOwner("isthmus-\(Digest.randomHex(bytes: 8))")!
    }

    private static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "isthmus" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "isthmus" : String(name.prefix(100))
    }
}
