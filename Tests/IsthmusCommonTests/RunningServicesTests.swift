import IsthmusCommon
import Synchronization
import Testing

/// The shutdown watchdog of `isthmus serve`: past its deadline it exits 1 naming the services that hung; once every
/// service stopped it does nothing.
@Suite struct RunningServicesTests {
    @Test func theVerdictNamesWhatStillRunsUntilEverythingStopped() async {
        let running = RunningServices()
        let gate = Latch()
        #expect(running.verdict() == .exit(status: 1, stillRunning: []))
        await withTaskGroup(of: Void.self) { group in
            running.add(&group, "listener") { await gate.wait() }
            #expect(running.verdict() == .exit(status: 1, stillRunning: ["listener"]))
            gate.open()
            await group.next()
            #expect(running.verdict() == .exit(status: 1, stillRunning: []))
        }
        running.markStopped()
        #expect(running.verdict() == .stopped)
    }

    @Test(.timeLimit(.minutes(1))) func aServiceThatIgnoresCancellationMakesTheWatchdogExitOne() async {
        let running = RunningServices()
        let sink = LogSink.memory()
        let exits = Mutex<[Int32]>([])
        // The stuck service returns only once the watchdog has called exit (in production the process ends there).
        let gate = Latch()
        await withTaskGroup(of: Void.self) { group in
            running.add(&group, "polite") { try? await Task.sleep(for: .seconds(3600)) }
            running.add(&group, "stuck") { await gate.wait() }
            group.cancelAll()
            await group.next()  // "polite" returned on cancellation; "stuck" did not.
            running.exitIfStillRunning(after: .milliseconds(20), logger: Logger(label: "test", sink: sink)) { status in
                exits.withLock { $0.append(status) }
                gate.open()
            }
        }
        running.markStopped()
        #expect(exits.withLock { $0 } == [1])
        let record = sink.records.first { $0.message == "Shutdown deadline passed; exiting" }
        #expect(record?.level == .error)
        #expect(record?.metadata["shutdown.still_running"] == "stuck")
        #expect(record?.metadata["shutdown.exit_status"] == "1")
    }
}

/// A latch a waiting task cannot leave by being cancelled, as a service that hangs on shutdown.
private final class Latch: Sendable {
    private struct State {
        var opened = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    func wait() async {
        await withCheckedContinuation { continuation in
            let openAlready = state.withLock { state in
                if !state.opened { state.waiters.append(continuation) }
                return state.opened
            }
            if openAlready { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.opened = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
