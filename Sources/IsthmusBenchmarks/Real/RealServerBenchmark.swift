import Foundation
import IsthmusCommon
import IsthmusFakes
import MatrixAppService
import MatrixClient
import Synchronization
import XMPPComponent

/// Part 4: through real Prosody and Synapse on the test bed. Each direction is measured bridged (the `isthmus serve`
/// release binary in between) and directly, with the benchmark itself standing where the bridge stands (a
/// component on Prosody, a listener on the appservice port, a ghost sending to Synapse) — the direct path's two legs
/// give the servers' own rate and latency. Ratio = bridged rate / slower direct leg; added latency = bridged −
/// (leg 1 + leg 2), at p50 and p99.
struct RealServerBenchmark {
    let report: Report
    let testbed: String
    /// Messages per rate run (Synapse takes ~50–100 events/s: keep it in the low hundreds).
    var burst = 150
    /// Messages per latency run, and their rate (well below capacity, so latency is not queueing).
    var paced = 60
    var pacedRate = 20.0
    /// Requests in flight for the Matrix user's sends (a busy room has many senders).
    var matrixSendersInFlight = 8
    /// Bridged rounds, each followed by the Synapse legs measured directly.
    var roundCount = 5

    static let section = "Real servers (Prosody + Synapse on the test bed)"

    private let xmppNick = "alice-x"

    func run() async throws {
        let section = Self.section
        let bed = try TestbedEnvironment(directory: testbed)
        let hs = bed.synapseURL
        let login = try await MatrixClient(configuration: .init(homeserverURL: URL(string: hs)!, accessToken: ""), logger: .disabled)
            .login(user: "alice", password: bed.password)
        let alice = MatrixClient(configuration: .init(homeserverURL: URL(string: hs)!, accessToken: login.accessToken.secret), logger: .disabled)
        let appservice = MatrixClient(configuration: .init(homeserverURL: URL(string: hs)!, accessToken: bed.asToken), logger: .disabled)
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let room = try await alice.createRoom(CreateRoomRequest(preset: "public_chat", name: "Isthmus benchmark \(suffix)"))
        let muc = "bench-\(suffix)@\(bed.mucDomain)"
        progress("real: Matrix room \(room), MUC \(muc)")

        let observer = MatrixObserver(homeserver: hs, token: login.accessToken.secret, room: room.rawValue, ignoring: login.userID.rawValue)
        try await observer.start()
        let observing = Task { await observer.run() }
        defer { observing.cancel() }
        let nick = xmppNick
        let xmpp = try await XMPPTestClient.connect(port: bed.c2sPort, user: "alice", domain: "localhost", password: bed.password,
                                                    onGroupchat: { sender, body in
            if sender != nick { MessageTracker.arrived(body: body.utf8) }
        })
        defer { xmpp.close() }

        // MARK: Direct: the benchmark stands where the bridge stands. Synapse's speed drifts (its database grows, other
        // work on the machine), so its legs are measured before and after every bridged round, and each round's ratio
        // is taken against the mean of the two around it; the median round is reported.
        progress("real: the servers driven directly")
        let ghost = UserID("@_xmpp_benchdirect\(UInt16.random(in: 0...UInt16.max)):localhost")!
        _ = try await appservice.registerGhost(ghost)
        _ = try await appservice.join(room, as: ghost)
        let aliceID = login.userID.rawValue
        let (xmppIn, xmppOut, firstIn, firstOut) = try await withNullAppservice(bed: bed, aliceID: aliceID, appservice: appservice) {
            let (xmppIn, xmppOut) = try await componentLegs(bed: bed, muc: muc, xmpp: xmpp)
            let (matrixIn, matrixOut) = try await synapseLegs(room: room, alice: alice, appservice: appservice, ghost: ghost)
            return (xmppIn, xmppOut, matrixIn, matrixOut)
        }
        var synapse: [(matrixIn: Leg, matrixOut: Leg)] = [(firstIn, firstOut)]

        var settings = LoopbackBridgeConfig(homeserverURL: hs, xmppPort: bed.componentPort, appservicePort: bed.appservicePort)
        settings.asToken = bed.asToken
        settings.hsToken = bed.hsToken
        settings.componentSecret = bed.componentSecret
        settings.componentDomain = bed.componentDomain
        let bridge = try BridgeUnderTest(settings: settings, name: "real")
        defer { bridge.remove() }
        try await bridge.link([(room, JID(muc)!)])
        var rounds: [Round] = []
        for round in 1...roundCount {
            progress("real: through the bridge (round \(round) of \(roundCount))")
            rounds.append(try await bridgedRound(bridge: bridge, xmpp: xmpp, alice: alice, room: room, muc: muc))
            progress("real: the Synapse legs directly (round \(round) of \(roundCount))")
            synapse.append(try await withNullAppservice(bed: bed, aliceID: aliceID, appservice: appservice) {
                try await synapseLegs(room: room, alice: alice, appservice: appservice, ghost: ghost)
            })
        }

        let matrixIn = Leg(pooling: synapse.map(\.matrixIn)), matrixOut = Leg(pooling: synapse.map(\.matrixOut))
        for (name, key, results, pacedRuns, leg1, leg2, directRates, legNames) in [
            ("XMPP → Matrix", "x2m", rounds.map(\.x2m), rounds.map(\.x2mPaced), xmppIn, matrixOut,
             (0..<rounds.count).map { min(xmppIn.rate, (synapse[$0].matrixOut.rate + synapse[$0 + 1].matrixOut.rate) / 2) },
             ("c2s → Prosody → component", "ghost → Synapse → /sync")),
            ("Matrix → XMPP", "m2x", rounds.map(\.m2x), rounds.map(\.m2xPaced), matrixIn, xmppOut,
             (0..<rounds.count).map { min(xmppOut.rate, (synapse[$0].matrixIn.rate + synapse[$0 + 1].matrixIn.rate) / 2) },
             ("user → Synapse → appservice", "component → Prosody → c2s")),
        ] {
            let ratios = zip(results, directRates).map { $0.rate / $1 }
            let median = Self.median(ratios)
            let bridgedRate = Self.median(results.map(\.rate)), directRate = Self.median(directRates)
            // The direct path's latency: leg 1 then leg 2, as the distribution of their sum.
            let directLatency = LatencySummary.sum(leg1.latency, leg2.latency)
            let bridgedLatency = LatencySummary(nanos: pacedRuns.flatMap(\.latency.samples))
            let cpu = results.compactMap(\.cpuSeconds).reduce(0, +) / Double(max(1, results.map(\.arrived).reduce(0, +))) * 1e6
            report.add(section, "\(key)_direct_leg1_rate", "\(name) direct: \(legNames.0)", leg1.rate, "msg/s")
            report.add(section, "\(key)_direct_leg2_rate", "\(name) direct: \(legNames.1)", leg2.rate, "msg/s")
            report.add(section, "\(key)_bridged_rate", "\(name) bridged (median of \(rounds.count) rounds)", bridgedRate, "msg/s")
            report.add(section, "\(key)_ratio", "\(name): bridged / direct (median round)", median, "×")
            report.add(section, "\(key)_ratio_min", "\(name): bridged / direct (worst round)", ratios.min() ?? .nan, "×")
            report.add(section, "\(key)_direct_p50_ms", "\(name) direct latency p50 (leg 1 + leg 2)", directLatency.p50, "ms")
            report.add(section, "\(key)_direct_p99_ms", "\(name) direct latency p99 (leg 1 + leg 2)", directLatency.p99, "ms")
            report.add(section, "\(key)_bridged_p50_ms", "\(name) bridged latency p50", bridgedLatency.p50, "ms")
            report.add(section, "\(key)_bridged_p99_ms", "\(name) bridged latency p99", bridgedLatency.p99, "ms")
            report.add(section, "\(key)_added_p50_ms", "\(name) added latency p50", bridgedLatency.p50 - directLatency.p50, "ms")
            report.add(section, "\(key)_added_p99_ms", "\(name) added latency p99", bridgedLatency.p99 - directLatency.p99, "ms")
            report.add(section, "\(key)_cpu_us", "\(name) bridge CPU per message", cpu, "µs")
            report.target("real servers \(name): bridged ≥ 0.9 × direct", met: median >= 0.9,
                          "\(Report.format(bridgedRate)) vs \(Report.format(directRate)) msg/s, median ratio \(Report.format(median))× "
                          + "(rounds: \(ratios.map(Report.format).joined(separator: ", ")))")
            if median < 0.9 || (ratios.max() ?? 1) - (ratios.min() ?? 1) > 0.2 {
                report.note("real \(name): rounds ranged \(Report.format(ratios.min() ?? .nan))–\(Report.format(ratios.max() ?? .nan))×: "
                            + "Synapse's speed varies between rounds by more than the bridge adds (it is the ceiling at ~40–100 events/s)")
            }
            let lost = results.map { $0.total - $0.arrived }.reduce(0, +) + pacedRuns.map { $0.total - $0.arrived }.reduce(0, +)
            if lost > 0 { report.note("real \(name): \(lost) messages did not arrive in time") }
        }
    }

    /// One bridged round: the bridge started, warmed up, a burst and a paced run each way, the bridge stopped.
    struct Round {
        var x2m: Load.Result
        var x2mPaced: Load.Result
        var m2x: Load.Result
        var m2xPaced: Load.Result
    }

    private func bridgedRound(bridge: BridgeUnderTest, xmpp: XMPPTestClient, alice: MatrixClient, room: RoomID,
                              muc: String) async throws -> Round {
        do {
            try bridge.start()
            _ = try await bridge.waitUntilAllActive(since: Clock.nanos(), timeout: .seconds(60))
            try await warmUp(xmpp: xmpp, alice: alice, room: room, muc: muc, bridge: bridge)
            let pid = bridge.pid
            let x2m = try await Load.windowed(total: burst, window: burst, timeout: .seconds(120), measuring: pid) { tracker, seq in
                tracker.sent(seq)
                try xmpp.sendGroupchat(to: JID(muc)!, body: tracker.body(seq), originID: OriginID("b\(tracker.run).\(seq)")!)
            }
            let x2mPaced = try await Load.paced(total: paced, rate: pacedRate, timeout: .seconds(60), measuring: pid) { tracker, seq in
                tracker.sent(seq)
                try xmpp.sendGroupchat(to: JID(muc)!, body: tracker.body(seq), originID: OriginID("b\(tracker.run).\(seq)")!)
            }
            let m2x = try await Load.windowed(total: burst, window: matrixSendersInFlight, timeout: .seconds(120), measuring: pid) { tracker, seq in
                Self.sendDetached(alice, tracker: tracker, seq: seq, room: room)
            }
            let m2xPaced = try await Load.paced(total: paced, rate: pacedRate, timeout: .seconds(60), measuring: pid) { tracker, seq in
                Self.sendDetached(alice, tracker: tracker, seq: seq, room: room)
            }
            await bridge.stop()
            return Round(x2m: x2m, x2mPaced: x2mPaced, m2x: m2x, m2xPaced: m2xPaced)
        } catch {
            await bridge.stop()
            throw error
        }
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// One leg of the direct path: the rate of a burst, and the latency of a paced run.
    struct Leg {
        var rate: Double
        var latency: LatencySummary

        init(rate: Load.Result, paced: Load.Result) {
            self.rate = rate.rate
            latency = paced.latency
        }

        /// Several measurements of the same leg: the median rate, the pooled latencies.
        init(pooling legs: [Leg]) {
            rate = RealServerBenchmark.median(legs.map(\.rate))
            latency = LatencySummary(nanos: legs.flatMap(\.latency.samples))
        }
    }

    /// Runs `body` with a listener on the appservice port standing in for the bridge: it takes every transaction and
    /// records the Matrix user's messages.
    private func withNullAppservice<T>(bed: TestbedEnvironment, aliceID: String, appservice: MatrixClient,
                                       _ body: () async throws -> T) async throws -> T {
        let listener = try HTTPServer(configuration: .init(host: "127.0.0.1", port: bed.appservicePort), logger: .disabled)
        let serving = Task {
            let ok = HTTPServerResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
            for await request in listener.requests {
                if request.path.contains("/transactions/"), let body = try? JSONDecoder().decode(PushedTransaction.self, from: request.body) {
                    for event in body.events where event.sender == aliceID && event.type == "m.room.message" {
                        if let text = event.content?.body { MessageTracker.arrived(body: text.utf8) }
                    }
                }
                request.respond(ok)
            }
        }
        defer {
            listener.stopAccepting()
            listener.close()
            serving.cancel()
        }
        _ = try? await appservice.ping(appServiceID: "isthmus")  // Synapse retries at once what it queued for the appservice
        return try await body()
    }

    /// c2s → Prosody → component, and component → Prosody → c2s, with the benchmark as the component.
    private func componentLegs(bed: TestbedEnvironment, muc: String, xmpp: XMPPTestClient) async throws -> (Leg, Leg) {
        let component = ComponentConnection(
            configuration: ComponentConfiguration(host: "127.0.0.1", port: bed.componentPort, componentDomain: bed.componentDomain,
                                                  secret: bed.componentSecret),
            logger: .disabled)
        let running = Task { await component.run() }
        let nick = xmppNick
        let receiving = Task {
            for await event in component.events {
                if case .stanza(.message(let message)) = event, message.type == .groupchat, message.from?.resource == nick,
                   let body = message.body {
                    MessageTracker.arrived(body: body.utf8)
                }
            }
        }
        defer {
            running.cancel()
            receiving.cancel()
        }
        guard await waitUntil(timeout: .seconds(10), { await component.isConnected }) else {
            throw BenchmarkFailure("could not connect to Prosody as the component \(bed.componentDomain)")
        }
        let occupant = JID("bench-direct@\(bed.componentDomain)/bench")!
        guard case .joined = try await component.join(room: JID(muc)!, nick: "Direct", occupant: occupant) else {
            throw BenchmarkFailure("the component could not join \(muc)")
        }
        try await xmpp.joinRoom(JID(muc)!, nick: xmppNick)
        let xmppIn = Leg(
            rate: try await Load.windowed(total: burst, window: burst, timeout: .seconds(60)) { tracker, seq in
                tracker.sent(seq)
                try xmpp.sendGroupchat(to: JID(muc)!, body: tracker.body(seq), originID: OriginID("d\(tracker.run).\(seq)")!)
            },
            paced: try await Load.paced(total: paced, rate: pacedRate, timeout: .seconds(60)) { tracker, seq in
                tracker.sent(seq)
                try xmpp.sendGroupchat(to: JID(muc)!, body: tracker.body(seq), originID: OriginID("d\(tracker.run).\(seq)")!)
            })
        let roomJID = JID(muc)!
        let xmppOut = Leg(
            rate: try await Load.windowed(total: burst, window: burst, timeout: .seconds(60)) { tracker, seq in
                tracker.sent(seq)
                try await component.sendGroupchat(from: occupant, room: roomJID, body: tracker.body(seq))
            },
            paced: try await Load.paced(total: paced, rate: pacedRate, timeout: .seconds(60)) { tracker, seq in
                tracker.sent(seq)
                try await component.sendGroupchat(from: occupant, room: roomJID, body: tracker.body(seq))
            })
        await component.close()
        return (xmppIn, xmppOut)
    }

    /// Matrix user → Synapse → appservice (needs ``withNullAppservice``), and ghost → Synapse → the user's `/sync`.
    private func synapseLegs(room: RoomID, alice: MatrixClient, appservice: MatrixClient, ghost: UserID) async throws -> (Leg, Leg) {
        let matrixIn = Leg(
            rate: try await Load.windowed(total: burst, window: matrixSendersInFlight, timeout: .seconds(120)) { tracker, seq in
                Self.sendDetached(alice, tracker: tracker, seq: seq, room: room)
            },
            paced: try await Load.paced(total: paced, rate: pacedRate, timeout: .seconds(60)) { tracker, seq in
                Self.sendDetached(alice, tracker: tracker, seq: seq, room: room)
            })
        // The bridge sends one room's messages one at a time, each after the previous one's answer: so does the ghost.
        let matrixOut = Leg(
            rate: try await Load.windowed(total: burst, window: burst, timeout: .seconds(120)) { tracker, seq in
                tracker.sent(seq)
                _ = try await appservice.sendMessage(.text(tracker.body(seq)), to: room, transactionID: ClientTransactionID("g\(tracker.run).\(seq)")!, as: ghost)
            },
            paced: try await Load.paced(total: paced, rate: pacedRate, timeout: .seconds(60)) { tracker, seq in
                tracker.sent(seq)
                _ = try await appservice.sendMessage(.text(tracker.body(seq)), to: room, transactionID: ClientTransactionID("g\(tracker.run).\(seq)")!, as: ghost)
            })
        return (matrixIn, matrixOut)
    }

    /// The Matrix user sends without waiting (the load's window bounds how many are in flight).
    private static func sendDetached(_ client: MatrixClient, tracker: MessageTracker, seq: Int, room: RoomID) {
        tracker.sent(seq)
        Task {
            _ = try? await client.sendMessage(.text(tracker.body(seq)), to: room, transactionID: ClientTransactionID("a\(tracker.run).\(seq)")!)
        }
    }

    /// One message each way through the bridge, so the ghost and the puppet exist before anything is timed.
    private func warmUp(xmpp: XMPPTestClient, alice: MatrixClient, room: RoomID, muc: String, bridge: BridgeUnderTest) async throws {
        for direction in 0..<2 {
            let result = try await Load.windowed(total: 1, window: 1, timeout: .seconds(30)) { tracker, seq in
                if direction == 0 {
                    tracker.sent(seq)
                    try xmpp.sendGroupchat(to: JID(muc)!, body: tracker.body(seq), originID: OriginID("w\(tracker.run)")!)
                } else {
                    Self.sendDetached(alice, tracker: tracker, seq: seq, room: room)
                }
            }
            guard result.arrived == 1 else {
                throw BenchmarkFailure("warm-up message \(direction == 0 ? "XMPP → Matrix" : "Matrix → XMPP") was not bridged (log: \(bridge.logPath))")
            }
        }
    }
}

/// The part of a pushed transaction the stand-in appservice reads.
private struct PushedTransaction: Decodable {
    struct Event: Decodable {
        struct Content: Decodable { var body: String? }
        var sender: String
        var type: String
        var content: Content?
    }
    var events: [Event]
}

/// The test bed's ports and secrets, from the `env` file `scripts/testbed start` writes.
struct TestbedEnvironment {
    var synapseURL: String
    var c2sPort: Int
    var componentPort: Int
    var appservicePort: Int
    var componentDomain: String
    var componentSecret: String
    var mucDomain: String
    var asToken: String
    var hsToken: String
    var password: String

    init(directory: String) throws {
        let path = (directory as NSString).appendingPathComponent("env")
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw BenchmarkFailure("no test bed at \(directory) (missing \(path))")
        }
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("export ") {
            let pair = line.dropFirst("export ".count).split(separator: "=", maxSplits: 1)
            if pair.count == 2 { values[String(pair[0])] = String(pair[1]) }
        }
        func value(_ key: String) throws -> String {
            guard let value = values[key] else { throw BenchmarkFailure("\(path) has no \(key)") }
            return value
        }
        synapseURL = try value("ISTHMUS_TEST_SYNAPSE_URL")
        c2sPort = Int(try value("ISTHMUS_TEST_C2S_PORT")) ?? 0
        componentPort = Int(try value("ISTHMUS_TEST_COMPONENT_PORT")) ?? 0
        appservicePort = Int(try value("ISTHMUS_TEST_AS_PORT")) ?? 0
        componentDomain = try value("ISTHMUS_TEST_COMPONENT_DOMAIN")
        componentSecret = try value("ISTHMUS_TEST_COMPONENT_SECRET")
        mucDomain = try value("ISTHMUS_TEST_MUC_DOMAIN")
        asToken = try value("ISTHMUS_TEST_AS_TOKEN")
        hsToken = try value("ISTHMUS_TEST_HS_TOKEN")
        password = try value("ISTHMUS_TEST_PASSWORD")
    }
}
