import Foundation
import IsthmusCommon
import IsthmusFakes
import Matrix
import MatrixAppService
import MatrixClient
import Media
import Synchronization

/// Part 6 (`media`): one large file through the bridge each way on the real test bed, with the `isthmus serve`
/// release binary in between. Matrix → XMPP: alice uploads it, the bridge hands XMPP a link, the benchmark fetches the
/// link (the bridge streams it from Synapse's authenticated media). XMPP → Matrix: the benchmark serves the file over
/// HTTP on loopback, an XMPP user posts its link, the bridge fetches it and uploads it to Synapse. Reported: MiB/s of
/// each (end to end, Synapse's own upload included for XMPP → Matrix) and the bridge's resident memory during the
/// transfer against idle (sampled every 20 ms).
struct MediaBenchmark {
    let report: Report
    let testbed: String
    /// The file size (MiB).
    var mebibytes = 200

    static let section = "Media (one file through the bridge, real servers)"

    func run() async throws {
        let bed = try TestbedEnvironment(directory: testbed)
        let hs = bed.synapseURL
        let login = try await MatrixClient(configuration: .init(homeserverURL: URL(string: hs)!, accessToken: ""), logger: .disabled)
            .login(user: "alice", password: bed.password)
        let alice = MatrixClient(configuration: .init(homeserverURL: URL(string: hs)!, accessToken: login.accessToken.secret), logger: .disabled)
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let room = try await alice.createRoom(CreateRoomRequest(preset: "public_chat", name: "Isthmus media benchmark \(suffix)"))
        let muc = "media-\(suffix)@\(bed.mucDomain)"
        let links = Mutex<[String]>([])
        let xmpp = try await XMPPTestClient.connect(port: bed.c2sPort, user: "alice", domain: "localhost", password: bed.password,
                                                    onGroupchat: { _, body in
            if body.contains("/media/") { links.withLock { $0.append(body) } }
        })
        defer { xmpp.close() }
        try await xmpp.joinRoom(JID(muc)!, nick: "alice-x")

        let size = mebibytes << 20
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("isthmus-media-bench-\(suffix).bin")
        // 1 MiB of random bytes, repeated (nothing on the way compresses).
        let block = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255) }
        var data = Data(capacity: size)
        for _ in 0..<mebibytes { data.append(contentsOf: block) }
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        var settings = LoopbackBridgeConfig(homeserverURL: hs, xmppPort: bed.componentPort, appservicePort: bed.appservicePort)
        settings.asToken = bed.asToken
        settings.hsToken = bed.hsToken
        settings.componentSecret = bed.componentSecret
        settings.componentDomain = bed.componentDomain
        settings.extraConfig = "media:\n  allow_private_addresses: true\n  max_size: \(size + 1)\n  stall_timeout_seconds: 120\n"
        let bridge = try BridgeUnderTest(settings: settings, name: "media")
        defer { bridge.remove() }
        try await bridge.link([(room, JID(muc)!)])
        try bridge.start()
        defer { Task { await bridge.stop() } }
        _ = try await bridge.waitUntilAllActive(since: Clock.nanos(), timeout: .seconds(60))
        let idle = await ProcessStats.waitForIdle(pid: bridge.pid).stats?.residentMiB ?? .nan

        // Matrix → XMPP.
        progress("media: alice uploads \(mebibytes) MiB and sends it")
        let mxc = try await Self.upload(file.path, hs: hs, token: login.accessToken.secret)
        _ = try await alice.sendMessage(MessageContent(messageType: .file, body: "big.bin", url: mxc, fileName: "big.bin",
                                                       info: MediaInfo(mimeType: "application/octet-stream", size: Int64(size))),
                                        to: room, transactionID: ClientTransactionID("media-\(suffix)")!)
        let link = try await Self.waitFor("the link on XMPP") { links.withLock { $0.first } }
        progress("media: fetching \(link)")
        let (m2xSeconds, m2xPeak, fetched) = try await Self.sampling(pid: bridge.pid) {
            let count = Mutex(0)
            let result = await CurlEasyTransfer.performDetached(CurlEasyTransfer.Request(url: link), onHead: { $0.status == 200 }) { chunk in
                count.withLock { $0 += chunk.count }
                return true
            }
            if case .failure(let failure) = result { throw BenchmarkFailure("fetching the link failed: \(failure)") }
            return count.withLock { $0 }
        }
        guard fetched == size else { throw BenchmarkFailure("the link gave \(fetched) bytes, not \(size)") }

        // XMPP → Matrix.
        progress("media: an XMPP user shares a \(mebibytes) MiB link")
        let server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), logger: .disabled)
        let serving = Task {
            for await request in server.requests {
                request.respond(HTTPServerResponse(status: 200, headers: ["Content-Type": "application/octet-stream"], body: data))
            }
        }
        defer {
            server.stopAccepting()
            server.close()
            serving.cancel()
        }
        let before = try await Self.newestFileEvent(alice, room)
        let (x2mSeconds, x2mPeak, _) = try await Self.sampling(pid: bridge.pid) {
            try xmpp.sendGroupchat(to: JID(muc)!, body: "http://127.0.0.1:\(server.port)/upload/big2.bin", originID: OriginID("media-\(suffix)")!)
            return try await Self.waitFor("the file on Matrix", timeout: .seconds(600)) {
                let newest = try await Self.newestFileEvent(alice, room)
                return newest != before ? newest : nil
            }
        }

        let section = Self.section
        report.add(section, "media_m2x_mib_s", "Matrix → XMPP: \(mebibytes) MiB fetched through the bridge's link", Double(mebibytes) / m2xSeconds, "MiB/s")
        report.add(section, "media_x2m_mib_s", "XMPP → Matrix: \(mebibytes) MiB fetched and uploaded to Synapse", Double(mebibytes) / x2mSeconds, "MiB/s")
        report.add(section, "media_idle_rss_mib", "bridge resident memory before the transfers", idle, "MiB")
        report.add(section, "media_m2x_rss_mib", "bridge resident memory peak, Matrix → XMPP", m2xPeak, "MiB")
        report.add(section, "media_x2m_rss_mib", "bridge resident memory peak, XMPP → Matrix", x2mPeak, "MiB")
        let worst = max(m2xPeak, x2mPeak) - idle
        report.target("media: resident memory within a few MiB of idle during a \(mebibytes) MiB transfer", met: worst <= 8,
                      "idle \(Report.format(idle)) MiB, peaks \(Report.format(m2xPeak)) / \(Report.format(x2mPeak)) MiB")
    }

    /// Runs `body` while sampling `pid`'s resident memory every 20 ms: its duration (s), the peak (MiB), its result.
    static func sampling<T: Sendable>(pid: Int32, _ body: () async throws -> T) async throws -> (Double, Double, T) {
        let peak = Mutex(0.0)
        let sampler = Task {
            while !Task.isCancelled {
                if let stats = ProcessStats.read(pid: pid) { peak.withLock { $0 = max($0, stats.residentMiB) } }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        let start = Clock.nanos()
        let result = try await body()
        let seconds = Clock.seconds(from: start, to: Clock.nanos())
        sampler.cancel()
        return (seconds, peak.withLock { $0 }, result)
    }

    static func waitFor<T>(_ what: String, timeout: Duration = .seconds(120), _ probe: () async throws -> T?) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let value = try await probe() { return value }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw BenchmarkFailure("timed out waiting for \(what)")
    }

    static func newestFileEvent(_ alice: MatrixClient, _ room: RoomID) async throws -> EventID? {
        let page = try await alice.roomMessages(in: room, limit: 5)
        return page.events.first { event in
            if case .message(let content) = event.content { return content.messageType == .file && content.url != nil && content.body == "big2.bin" }
            return false
        }?.eventID
    }

    static func upload(_ path: String, hs: String, token: String) async throws -> String {
        var request = CurlEasyTransfer.Request(url: hs + "/_matrix/media/v3/upload?filename=big.bin")
        request.headers = ["Authorization: Bearer \(token)"]
        request.upload = (path, "application/octet-stream")
        let answer = Mutex<[UInt8]>([])
        let result = await CurlEasyTransfer.performDetached(request, onHead: { _ in true }) { chunk in
            answer.withLock { $0.append(contentsOf: chunk) }
            return true
        }
        guard case .success(let head) = result, head.status == 200,
              let object = try JSONSerialization.jsonObject(with: Data(answer.withLock { $0 })) as? [String: Any],
              let uri = object["content_uri"] as? String else {
            throw BenchmarkFailure("upload to Synapse failed: \(result) \(String(decoding: answer.withLock { $0 }, as: UTF8.self))")
        }
        return uri
    }
}
