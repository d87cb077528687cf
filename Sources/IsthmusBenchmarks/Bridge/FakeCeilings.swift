import IsthmusFakes
import Foundation
import IsthmusCommon
import MatrixAppService
import MatrixClient
import Synchronization

/// The fakes' own ceilings, each measured alone against a trivial peer, so the bridge's figures read as a ratio:
/// how fast the fake MUC injects and reflects, how fast the fake homeserver pushes and answers.
enum FakeCeilings {
    /// Fake MUC → trivial component: messages/s from simulated users, each reflected to `copies` occupants per room.
    static func mucInject(rooms: Int, copies: Int, total: Int, window: Int) async throws -> Load.Result {
        let muc = try FakeMUCServer.tracking()
        let server = Task { await muc.run() }
        defer { muc.close(); server.cancel() }
        let current = Mutex<MessageTracker?>(nil)
        let (component, reader) = try await NullComponent.connect(port: muc.port, copies: copies) { index in
            current.withLock { $0 }?.arrived(index)
        }
        defer { component.close(); reader.cancel() }
        for room in 0..<rooms {
            muc.addXMPPUser(room: "bench\(room)@conference.localhost", nick: "xmpp 0")
            for copy in 0..<copies { try component.join(room: "bench\(room)@conference.localhost", nick: "n\(copy)", occupant: "o\(copy)") }
        }
        guard await waitUntil(timeout: .seconds(10), { muc.hostedOccupants == rooms * copies }) else {
            throw BenchmarkFailure("the trivial component did not join the fake MUC")
        }
        return try await Load.windowed(total: total, window: window, timeout: .seconds(60)) { tracker, seq in
            if seq == 0 { current.withLock { $0 = tracker } }
            tracker.sent(seq)
            muc.inject(room: "bench\(seq % rooms)@conference.localhost", nick: "xmpp 0", body: tracker.body(seq))
        }
    }

    /// Trivial component → fake MUC: groupchat messages/s taken (and reflected to `copies` occupants per room).
    static func mucReflect(rooms: Int, copies: Int, total: Int, window: Int) async throws -> Load.Result {
        let muc = try FakeMUCServer.tracking()
        let server = Task { await muc.run() }
        defer { muc.close(); server.cancel() }
        let (component, reader) = try await NullComponent.connect(port: muc.port, copies: copies) { _ in }
        defer { component.close(); reader.cancel() }
        for room in 0..<rooms {
            for copy in 0..<copies { try component.join(room: "bench\(room)@conference.localhost", nick: "n\(copy)", occupant: "o\(copy)") }
        }
        guard await waitUntil(timeout: .seconds(10), { muc.hostedOccupants == rooms * copies }) else {
            throw BenchmarkFailure("the trivial component did not join the fake MUC")
        }
        return try await Load.windowed(total: total, window: window, timeout: .seconds(60)) { tracker, seq in
            tracker.sent(seq)
            try component.sendGroupchat(room: "bench\(seq % rooms)@conference.localhost", occupant: "o0", body: tracker.body(seq),
                                        id: "c\(tracker.run).\(seq)")
        }
    }

    /// Fake homeserver's pusher → a listener that answers 200 at once: events/s (Synapse-style batching).
    static func homeserverPush(total: Int, window: Int) async throws -> Load.Result {
        let listener = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), logger: .disabled)
        let ok = HTTPServerResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
        let serving = Task {
            for await request in listener.requests {
                MessageTracker.arrivedAll(in: Array(request.body))
                request.respond(ok)
            }
        }
        let pusher = TransactionPusher(port: listener.port, hsToken: "bench")
        let pushing = Task { await pusher.run() }
        defer {
            pusher.stop()
            pushing.cancel()
            listener.stopAccepting()
            listener.close()
            serving.cancel()
        }
        return try await Load.windowed(total: total, window: window, timeout: .seconds(60)) { tracker, seq in
            pusher.enqueue(TransactionPusher.messageEvent(room: "!bench\(seq % 50):localhost", sender: "@m0-0:localhost",
                                                          eventID: "$c\(tracker.run).\(seq)", body: tracker.body(seq)),
                           tracker: tracker, seq: seq)
        }
    }

    /// Raw HTTP clients (`connections` in parallel) → fake homeserver `PUT …/send/…`: calls/s answered.
    static func homeserverAnswer(total: Int, connections: Int) async throws -> Load.Result {
        let homeserver = try AnsweringHomeserver.tracking()
        let serving = Task { await homeserver.run() }
        defer { homeserver.stop(); serving.cancel() }
        let tracker = MessageTracker(capacity: total)
        defer { tracker.close() }
        let port = homeserver.port
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<connections {
                group.addTask {
                    let client = try await RawHTTPClient(port: port)
                    for seq in stride(from: worker, to: total, by: connections) {
                        let body = Array(#"{"msgtype":"m.text","body":"\#(tracker.body(seq))"}"#.utf8)
                        _ = try await client.request(
                            "PUT", "/_matrix/client/v3/rooms/%21bench0%3Alocalhost/send/m.room.message/t\(tracker.run).\(seq)?user_id=%40_xmpp_a%3Alocalhost",
                            headers: [("Authorization", "Bearer bench"), ("Content-Type", "application/json")], body: body,
                            willSend: { tracker.sent(seq) })
                    }
                }
            }
            try await group.waitForAll()
        }
        let (rate, latency, arrived) = tracker.results()
        return Load.Result(rate: rate, latency: latency, arrived: arrived, total: total, offered: .nan, cpuSeconds: nil)
    }

    /// The bridge's own HTTP client (``MatrixClient``, `concurrency` calls in flight) → fake homeserver: what one
    /// `send` costs before any bridging work (in this process, so the fake's share is included).
    static func urlSessionSends(total: Int, concurrency: Int) async throws -> Load.Result {
        let homeserver = try AnsweringHomeserver.tracking()
        let serving = Task { await homeserver.run() }
        defer { homeserver.stop(); serving.cancel() }
        let client = MatrixClient(configuration: .init(homeserverURL: URL(string: "http://127.0.0.1:\(homeserver.port)")!,
                                                       accessToken: "bench", maxConnectionsPerHost: 32), logger: .disabled)
        let tracker = MessageTracker(capacity: total)
        defer { tracker.close() }
        let room = RoomID("!bench0:localhost")!, ghost = UserID("@_xmpp_bench:localhost")!
        let before = ProcessStats.current()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    for seq in stride(from: worker, to: total, by: concurrency) {
                        tracker.sent(seq)
                        _ = try await client.sendMessage(.text(tracker.body(seq)), to: room,
                                                         transactionID: ClientTransactionID("u\(tracker.run).\(seq)")!, as: ghost)
                    }
                }
            }
            try await group.waitForAll()
        }
        let after = ProcessStats.current()
        let (rate, latency, arrived) = tracker.results()
        return Load.Result(rate: rate, latency: latency, arrived: arrived, total: total, offered: .nan,
                           cpuSeconds: before.flatMap { b in after.map { $0.cpuSeconds - b.cpuSeconds } })
    }
}
