import Foundation

/// Part 3: one room with 500 Matrix members, so the component hosts 501 occupants and every MUC message (and every
/// presence) reaches it 501 times; the bridge acts on one copy. Cost per bridged message, each way.
struct FanInBenchmark {
    var puppets = 500
    var messages = 2_000
    var window = 16
    var m2xMessages = 750
    var m2xRate = 150.0
    let report: Report

    static let section = "Fan-in (1 room, 500 Matrix puppets)"

    func run() async throws {
        let section = Self.section
        let copies = puppets + 1
        progress("fan-in: the fake MUC alone with \(copies) copies per message")
        let ceiling = try await FakeCeilings.mucInject(rooms: 1, copies: copies, total: messages, window: window)
        progress("fan-in: starting the bridge with \(puppets) puppets in one room")
        let harness = try await FakeHarness(name: "fanin", rooms: 1, matrixMembers: puppets, xmppUsers: 1)
        do {
            let start = try await harness.startBridge(timeout: .seconds(300))
            let afterStart = harness.bridge.stats()
            let pid = harness.bridge.pid
            let x2m = try await Load.windowed(total: messages, window: window, timeout: .seconds(300), measuring: pid) { tracker, seq in
                try harness.sendFromXMPP(tracker, seq)
            }
            // Matrix → XMPP at a fixed rate below what the bridge can take: our own message leaves at once, but its 501
            // reflections come back to be read, and a sender faster than that would only pile them up unread.
            let m2x = try await Load.paced(total: m2xMessages, rate: m2xRate, timeout: .seconds(300), measuring: pid) { tracker, seq in
                harness.sendFromMatrix(tracker, seq)
            }
            let stats = harness.bridge.stats()
            report.add(section, "copies_per_message", "copies of each MUC message to the component", Double(copies), "copies")
            report.add(section, "ready_s", "start-up: all 500 puppets joined", start.populated, "s")
            report.add(section, "fake_ceiling_per_s", "fake MUC → null component, \(copies) copies each", ceiling.rate, "msg/s")
            for (name, key, result) in [("XMPP → Matrix", "x2m", x2m), ("Matrix → XMPP", "m2x", m2x)] {
                let rateLabel = key == "x2m" ? "\(name): bridged, as fast as taken" : "\(name): bridged at \(Int(m2xRate)) msg/s offered"
                report.add(section, "\(key)_rate", rateLabel, result.rateUntilIdle, "msg/s")
                report.add(section, "\(key)_cpu_us", "\(name): bridge CPU per bridged message", result.cpuMicrosPerMessage, "µs")
                report.add(section, "\(key)_cpu_us_per_copy", "\(name): bridge CPU per copy received", result.cpuMicrosPerMessage / Double(copies), "µs")
                report.add(section, "\(key)_p50_ms", "\(name): p50 latency", result.latency.p50, "ms")
                if result.arrived < result.total { report.note("fan-in \(name): \(result.total - result.arrived) messages did not arrive") }
            }
            report.add(section, "rss_after_start_mib", "resident memory after start-up", afterStart?.residentMiB ?? .nan, "MiB")
            report.add(section, "rss_peak_mib", "resident memory, peak", stats?.peakResidentMiB ?? .nan, "MiB")
            report.add(section, "rss_end_mib", "resident memory after the runs", stats?.residentMiB ?? .nan, "MiB")
        } catch {
            await harness.shutdown()
            throw error
        }
        await harness.shutdown()
    }
}
