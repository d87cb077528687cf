import Foundation
import IsthmusCommon
import IsthmusFakes
import IsthmusStore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The release `isthmus serve` binary run as its own process against the benchmark's servers, with a generated
/// config and a store the benchmark fills with links beforehand; its memory and CPU are read from `/proc`.
final class BridgeUnderTest: @unchecked Sendable {
    let directory: URL
    let configPath: String
    let settings: LoopbackBridgeConfig
    let store: Store
    let logPath: String
    private var process: Process?

    /// Writes the config into a new directory and opens (creates) the bridge's store there.
    init(settings: LoopbackBridgeConfig, name: String) throws {
        self.settings = settings
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("isthmus-bench-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configPath = directory.appendingPathComponent("isthmus.yaml").path
        logPath = directory.appendingPathComponent("bridge.log").path
        try settings.yaml.write(toFile: configPath, atomically: true, encoding: .utf8)
        if let url = settings.databaseURL {
            guard let url = PostgresURL(url) else { throw BenchmarkFailure("not a postgresql:// URL: \(url)") }
            store = try Store(location: .postgres(url: url), logger: .disabled)
        } else {
            store = try Store(path: directory.appendingPathComponent("isthmus.sqlite").path, logger: .disabled)
        }
    }

    /// Records links (Matrix room id ↔ MUC JID) in the store, as `isthmus link` would.
    func link(_ pairs: [(room: RoomID, muc: JID)]) async throws {
        for pair in pairs {
            try await store.insertRoomLink(RoomLink(matrixRoom: pair.room, matrixAlias: nil, muc: pair.muc))
        }
    }

    /// Starts `isthmus serve` (log to ``logPath``).
    func start() throws {
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        let process = Process()
        // `ISTHMUS_BENCH_WRAPPER="heaptrack -o /tmp/x"` (or valgrind …) runs the bridge under a profiler.
        let wrapper = ProcessInfo.processInfo.environment["ISTHMUS_BENCH_WRAPPER"]?.split(separator: " ").map(String.init) ?? []
        if let program = wrapper.first {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [program] + wrapper.dropFirst() + [Self.isthmusBinary, "serve", "-c", configPath]
        } else {
            process.executableURL = URL(fileURLWithPath: Self.isthmusBinary)
            process.arguments = ["serve", "-c", configPath]
        }
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        Self.running.withLock { _ = $0.insert(process.processIdentifier) }
    }

    /// Bridges started and not yet stopped, for ``stopAllOnSignal()``.
    private static let running = Mutex<Set<Int32>>([])

    /// On SIGINT or SIGTERM: stops every bridge this process started, then exits (130 or 143), so an interrupted
    /// benchmark leaves no bridge behind.
    static func stopAllOnSignal() {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                for pid in running.withLock({ $0 }) { kill(pid, SIGTERM) }
                exit(128 + number)
            }
            source.resume()
            signalSources.sources.append(source)
        }
    }

    /// Keeps the signal sources alive for the whole run.
    private final class SignalSources: @unchecked Sendable {
        var sources: [any DispatchSourceSignal] = []
    }
    private static let signalSources = SignalSources()

    /// The bridge's process: the one started, or with `ISTHMUS_BENCH_WRAPPER` the wrapper's descendant that runs the
    /// `isthmus` binary (heaptrack, perf and valgrind run it as a child), so that its memory and CPU are what is read
    /// and what is stopped. The wrapper's own pid until that child exists.
    var pid: Int32 {
        guard let process else { return 0 }
        let started = process.processIdentifier
        guard ProcessInfo.processInfo.environment["ISTHMUS_BENCH_WRAPPER"] != nil else { return started }
        let binary = URL(fileURLWithPath: Self.isthmusBinary).resolvingSymlinksInPath().path
        return Self.descendant(of: started) { pid in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) == binary
        } ?? started
    }

    /// The first descendant of `root` (breadth first, from `/proc/PID/task/TID/children`) that `matches`.
    private static func descendant(of root: Int32, where matches: (Int32) -> Bool) -> Int32? {
        var queue = [root]
        while !queue.isEmpty {
            let parent = queue.removeFirst()
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(parent)/task")) ?? []
            for task in tasks {
                let children = (try? String(contentsOfFile: "/proc/\(parent)/task/\(task)/children", encoding: .utf8)) ?? ""
                for child in children.split(separator: " ").compactMap({ Int32($0) }) {
                    if matches(child) { return child }
                    queue.append(child)
                }
            }
        }
        return nil
    }
    var isRunning: Bool { process?.isRunning ?? false }

    /// Memory and CPU time of the bridge process now.
    func stats() -> ProcessStats? { ProcessStats.read(pid: pid) }

    /// SIGTERM, then waits for the exit (SIGKILL after `timeout`); returns the exit status.
    @discardableResult
    func stop(timeout: Duration = .seconds(30)) async -> Int32 {
        guard let process else { return 0 }
        // The bridge itself: a wrapper (a shell script, for heaptrack) need not pass the signal on.
        let bridge = pid
        if process.isRunning { kill(bridge, SIGTERM) }
        let exited = await waitUntil(timeout: timeout, interval: .milliseconds(10)) { !process.isRunning }
        if !exited {
            kill(bridge, SIGKILL)
            kill(process.processIdentifier, SIGKILL)
            _ = await waitUntil(timeout: .seconds(10)) { !process.isRunning }
        }
        self.process = nil
        Self.running.withLock { _ = $0.remove(process.processIdentifier) }
        // Foundation traps on the status of a process still running.
        guard !process.isRunning else { return -1 }
        // Returns at once; without it Foundation's Process is never freed on Linux (its run-loop source and it retain
        // each other until waitUntilExit; docs/reliability.md, "AddressSanitizer").
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// How many links are `active`, and how many there are.
    func activeLinks() async -> (active: Int, total: Int) {
        guard let links = try? await store.roomLinks() else { return (0, 0) }
        return (links.filter { $0.status == .active }.count, links.count)
    }

    /// Waits until every link is active (or the process died, or `timeout`); returns the seconds it took from `since`.
    func waitUntilAllActive(since start: Int64, timeout: Duration) async throws -> Double {
        let ok = await waitUntil(timeout: timeout, interval: .milliseconds(20)) {
            let (active, total) = await activeLinks()
            return (active == total && total > 0) || !isRunning
        }
        guard ok, isRunning else {
            throw BenchmarkFailure("the bridge did not activate every link within \(timeout) (log: \(logPath)); "
                                   + "active: \(await activeLinks())")
        }
        return Clock.seconds(from: start, to: Clock.nanos())
    }

    /// Deletes the directory (config, store, log) unless told to keep it.
    func remove() {
        if ProcessInfo.processInfo.environment["ISTHMUS_BENCH_KEEP"] == nil {
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// The `isthmus` binary beside this one (both are built into the same `.build/release`), or `$ISTHMUS_BIN`.
    static var isthmusBinary: String {
        if let path = ProcessInfo.processInfo.environment["ISTHMUS_BIN"], !path.isEmpty { return path }
        let own = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        return own.deletingLastPathComponent().appendingPathComponent("isthmus").path
    }
}
