import IsthmusMetrics
import Testing

/// The registry under concurrent updates, and the process figures from /proc.
struct MetricsRegistryTests {
    @Test func manyTasksIncrementingGiveTheExactTotal() async {
        let registry = MetricsRegistry()
        let family = registry.counter("n_total", help: "N.", labels: ["kind"])
        let latency = registry.histogram("l_seconds", help: "L.", buckets: [1])
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<64 {
                group.addTask {
                    for _ in 0..<1_000 {
                        family.labels(task.isMultiple(of: 2) ? "even" : "odd").increment()
                        latency.labels().observe(0.5)
                    }
                }
            }
        }
        #expect(family.labels("even").value == 32_000)
        #expect(family.labels("odd").value == 32_000)
        #expect(latency.labels().value.count == 64_000)
        #expect(latency.labels().value.bucketCounts == [64_000, 0])
    }

    @Test func processMetricsAreReadFromProc() {
        let registry = MetricsRegistry()
        ProcessMetrics.register(in: registry)
        let families = Dictionary(uniqueKeysWithValues: registry.families().map { ($0.name, $0) })
        #expect(Set(families.keys) == ["process_cpu_seconds_total", "process_resident_memory_bytes",
                                       "process_start_time_seconds", "process_open_fds"])
        func value(_ name: String) -> Double {
            guard case .number(let value)? = families[name]?.samples.first?.value else { return -1 }
            return value
        }
        #expect(value("process_resident_memory_bytes") > 1_000_000)
        #expect(value("process_open_fds") >= 3)
        // Started within the last day, and not in the future.
        let now = Double(time(nil))
        #expect(value("process_start_time_seconds") > now - 86_400)
        #expect(value("process_start_time_seconds") <= now + 1)
        #expect(value("process_cpu_seconds_total") > 0)
    }
}

#if canImport(Glibc)
import Glibc
#endif
