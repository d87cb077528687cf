#if canImport(Glibc)
import Glibc
#endif

/// The standard `process_*` metrics of Prometheus client libraries, read from Linux's /proc at each scrape.
///
/// `process_cpu_seconds_total` (user + system), `process_resident_memory_bytes`, `process_start_time_seconds` (Unix
/// time) and `process_open_fds`. Figures that cannot be read (another OS, a restricted /proc) are left out. Does file I/O.
public enum ProcessMetrics {
    /// Adds the process families to `registry` (computed at each scrape).
    public static func register(in registry: MetricsRegistry) {
        registry.collect { families() }
    }

    /// The process families now.
    static func families() -> [PrometheusExposition.Family] {
        var families: [PrometheusExposition.Family] = []
        func add(_ name: String, _ help: String, _ kind: PrometheusExposition.Family.Kind, _ value: Double?) {
            guard let value else { return }
            families.append(.init(name: name, help: help, kind: kind, samples: [.init(value: .number(value))]))
        }
        let stat = readFile("/proc/self/stat").flatMap(Stat.init)
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        add("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", .counter,
            stat.map { Double($0.userTicks + $0.systemTicks) / ticks })
        add("process_resident_memory_bytes", "Resident memory size in bytes.", .gauge,
            stat.map { Double($0.residentPages) * Double(sysconf(Int32(_SC_PAGESIZE))) })
        add("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", .gauge,
            stat.flatMap { stat in bootTime().map { $0 + Double(stat.startTicks) / ticks } })
        add("process_open_fds", "Number of open file descriptors.", .gauge, openDescriptors().map(Double.init))
        return families
    }

    /// The fields of `/proc/self/stat` used here (proc(5): utime 14, stime 15, starttime 22, rss 24).
    struct Stat {
        var userTicks: Int
        var systemTicks: Int
        var startTicks: Int
        var residentPages: Int

        init?(_ text: String) {
            // The command name (field 2) is in parentheses and may contain spaces: fields are counted after it.
            guard let close = text.lastIndex(of: ")") else { return nil }
            let fields = text[text.index(after: close)...].split(separator: " ")
            func field(_ number: Int) -> Int? { fields.count > number - 3 ? Int(fields[number - 3]) : nil }
            guard let user = field(14), let system = field(15), let start = field(22), let rss = field(24) else { return nil }
            userTicks = user
            systemTicks = system
            startTicks = start
            residentPages = rss
        }
    }

    /// The boot time (`btime` in /proc/stat), Unix seconds.
    static func bootTime() -> Double? {
        guard let text = readFile("/proc/stat") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst(6).trimmingPrefix(" "))
        }
        return nil
    }

    /// Entries of /proc/self/fd, less the descriptor used to list them.
    static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { count += 1 }
        }
        return max(0, count - 1)
    }

    /// A small file's text (files in /proc report size 0, so it is read until the end).
    static func readFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
