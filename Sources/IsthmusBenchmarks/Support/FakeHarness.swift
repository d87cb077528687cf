import Foundation
import IsthmusCommon
import IsthmusFakes

/// The bridge process between a fake MUC server and a fake homeserver, with linked rooms: room `i` is Matrix room
/// `!bench<i>:localhost` ↔ MUC `bench<i>@conference.localhost`, with `matrixMembers` Matrix users (puppets) and
/// `xmppUsers` simulated XMPP occupants (ghosts).
final class FakeHarness: @unchecked Sendable {
    let muc: FakeMUCServer
    let homeserver: AnsweringHomeserver
    let pusher: TransactionPusher
    let bridge: BridgeUnderTest
    let rooms: Int
    let matrixMembers: Int
    let xmppUsers: Int
    /// The bridge's `metrics.listen` port (its store counters, for ``CostProbe``).
    let metricsPort: Int
    private var tasks: [Task<Void, Never>] = []

    static let bot = "@isthmus:localhost"

    /// `databaseURL`: the bridge's store on PostgreSQL (else SQLite).
    init(name: String, rooms: Int, matrixMembers: Int, xmppUsers: Int, logLevel: String = "info",
         databaseURL: String? = nil) async throws {
        self.rooms = rooms
        self.matrixMembers = matrixMembers
        self.xmppUsers = xmppUsers
        muc = try FakeMUCServer.tracking()
        homeserver = try AnsweringHomeserver.tracking()
        let appservicePort = try LoopbackPort.unused()
        var settings = LoopbackBridgeConfig(homeserverURL: "http://127.0.0.1:\(homeserver.port)", xmppPort: muc.port,
                                                appservicePort: appservicePort)
        settings.logLevel = logLevel
        settings.databaseURL = databaseURL
        metricsPort = try LoopbackPort.unused()
        settings.extraConfig += "metrics:\n  listen: 127.0.0.1:\(metricsPort)\n"
        if ProcessInfo.processInfo.environment["ISTHMUS_BENCH_HA"] == "1" {
            // One process of an active/standby pair: it takes the lease at once, and every store write is fenced.
            settings.extraConfig += "ha:\n  enabled: true\n"
        }
        bridge = try BridgeUnderTest(settings: settings, name: name)
        pusher = TransactionPusher(port: appservicePort, hsToken: settings.hsToken)
        var links: [(room: RoomID, muc: JID)] = []
        for index in 0..<rooms {
            homeserver.setMembers(room: matrixRoom(index), (0..<matrixMembers).map { (matrixUser(index, $0), "Matrix \($0)") }, bot: Self.bot)
            for user in 0..<xmppUsers { muc.addXMPPUser(room: mucRoom(index), nick: xmppNick(user)) }
            links.append((RoomID(matrixRoom(index))!, JID(mucRoom(index))!))
        }
        try await bridge.link(links)
        let muc = self.muc, homeserver = self.homeserver, pusher = self.pusher
        tasks = [Task { await muc.run() }, Task { await homeserver.run() }, Task { await pusher.run() }]
    }

    func matrixRoom(_ index: Int) -> String { "!bench\(index):localhost" }
    func mucRoom(_ index: Int) -> String { "bench\(index)@conference.localhost" }
    func matrixUser(_ room: Int, _ member: Int) -> String { "@m\(room)-\(member):localhost" }
    func xmppNick(_ user: Int) -> String { "xmpp \(user)" }

    /// Puppets and ghosts the rooms should end up with.
    var expectedPuppets: Int { rooms * matrixMembers }
    var expectedGhosts: Int { rooms * xmppUsers }

    /// What the bridge spends on a run besides CPU time.
    var costProbe: CostProbe { CostProbe(pid: bridge.pid, metricsPort: metricsPort) }

    /// Starts the bridge and waits until every link is active and every puppet and ghost is in place (`newGhosts`:
    /// how many ghosts must be set up on Matrix; none after a restart). Returns the seconds until all links were
    /// active and until everything was in place.
    func startBridge(timeout: Duration, newGhosts: Int? = nil) async throws -> (active: Double, populated: Double) {
        let newGhosts = newGhosts ?? expectedGhosts
        let ghostsBefore = homeserver.counters.ghostMemberStates
        let start = Clock.nanos()
        try bridge.start()
        let active = try await bridge.waitUntilAllActive(since: start, timeout: timeout)
        let populated = await waitUntil(timeout: timeout, interval: .milliseconds(10)) {
            muc.hostedOccupants >= rooms * (1 + matrixMembers)
                && homeserver.counters.ghostMemberStates - ghostsBefore >= newGhosts
        }
        guard populated else {
            throw BenchmarkFailure("rooms not populated: \(muc.hostedOccupants) occupants, "
                                   + "\(homeserver.counters.ghostMemberStates) ghost member states (log: \(bridge.logPath))")
        }
        return (active, Clock.seconds(from: start, to: Clock.nanos()))
    }

    /// One XMPP → Matrix message: simulated user 0 of room `seq % rooms` speaks.
    func sendFromXMPP(_ tracker: MessageTracker, _ seq: Int, roomCount: Int? = nil) throws {
        let room = seq % (roomCount ?? rooms)
        tracker.sent(seq)
        guard muc.inject(room: mucRoom(room), nick: xmppNick(0), body: tracker.body(seq)) else {
            throw BenchmarkFailure("the bridge is not connected to the fake XMPP server")
        }
    }

    /// One Matrix → XMPP message: Matrix member 0 of room `seq % rooms` speaks (stamped when pushed).
    func sendFromMatrix(_ tracker: MessageTracker, _ seq: Int, roomCount: Int? = nil) {
        let room = seq % (roomCount ?? rooms)
        pusher.enqueue(TransactionPusher.messageEvent(room: matrixRoom(room), sender: matrixUser(room, 0),
                                                      eventID: "$b\(tracker.run).\(seq)", body: tracker.body(seq)),
                       tracker: tracker, seq: seq)
    }

    /// Stops the bridge (SIGTERM) and the fakes, and deletes the bridge's directory.
    func shutdown() async {
        await bridge.stop()
        pusher.stop()
        homeserver.stop()
        muc.close()
        for task in tasks { task.cancel() }
        bridge.remove()
    }
}
