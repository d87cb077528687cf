import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Resident memory and CPU time of a process, from its own accounting in `/proc` (Linux).
struct ProcessStats: Sendable {
    /// `VmRSS`: resident now, in MiB.
    var residentMiB: Double
    /// `VmHWM`: resident peak so far, in MiB.
    var peakResidentMiB: Double
    /// user + system CPU time, in seconds.
    var cpuSeconds: Double

    /// Reads the figures of process `pid`; nil when it is gone.
    static func read(pid: Int32) -> ProcessStats? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        func kibibytes(_ key: String) -> Double {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }) else { return .nan }
            return Double(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? .nan
        }
        // Fields after the command name (which may hold spaces) start at field 3; utime and stime are fields 14 and 15.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return ProcessStats(residentMiB: kibibytes("VmRSS") / 1024, peakResidentMiB: kibibytes("VmHWM") / 1024,
                            cpuSeconds: (user + system) / ticks)
    }

    /// Waits until process `pid` is idle (below `load` cores over `window`), at most `timeout`; returns the moment
    /// its busy time ended (the start of the first idle window) and its figures then.
    static func waitForIdle(pid: Int32, load: Double = 0.05, window: Duration = .milliseconds(100),
                            timeout: Duration = .seconds(120)) async -> (at: Int64, stats: ProcessStats?) {
        let deadline = ContinuousClock.now + timeout
        var last = read(pid: pid)
        var lastAt = Clock.nanos()
        while ContinuousClock.now < deadline {
            try? await Task.sleep(for: window)
            let now = read(pid: pid)
            let nowAt = Clock.nanos()
            guard let previous = last, let current = now else { return (nowAt, now) }
            if (current.cpuSeconds - previous.cpuSeconds) / Clock.seconds(from: lastAt, to: nowAt) < load { return (lastAt, previous) }
            last = now
            lastAt = nowAt
        }
        return (Clock.nanos(), last)
    }

    /// The figures of this process.
    static func current() -> ProcessStats? { read(pid: getpid()) }
}

/// Machine facts printed beside the figures.
enum MachineInfo {
    static var cpuModel: String {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let line = info.split(separator: "\n").first { $0.hasPrefix("model name") }
        return line.flatMap { $0.split(separator: ":", maxSplits: 1).last }.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
    }

    static var cores: Int { ProcessInfo.processInfo.activeProcessorCount }

    static var memoryGiB: Double { Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824 }

    /// The 1-minute load average (other work on the machine skews the figures).
    static var loadAverage: Double {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return Double(text.split(separator: " ").first ?? "") ?? .nan
    }
}
