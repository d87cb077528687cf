import Foundation
import IsthmusFakes
import MatrixAppService
import Synchronization

/// The benchmarks' homeserver, as cheap as it can be: the shared ``IsthmusFakes/FakeHomeserver`` (no recording)
/// answering every client-server call at once with plausible JSON (register, profile, join, invite, member state,
/// send → a new event id, joined_members from the room's configured members, appservice ping), and noting when
/// benchmark messages arrive. Pushing transactions to the bridge is ``TransactionPusher``'s job. Thread-safe.
final class BenchHomeserver: Sendable {
    private let fake: FakeHomeserver
    var port: Int { fake.port }
    var server: HTTPServer { fake.server }
    private let answers = Answers()

    /// Counters the benchmarks read.
    struct Counters: Sendable {
        var calls = 0
        var sends = 0
        var registers = 0
        var ghostJoins = 0
        var ghostMemberStates = 0
    }

    fileprivate struct State {
        var counters = Counters()
        var nextEvent = 0
        /// `/joined_members` bodies by room id.
        var members: [String: Data] = [:]
    }

    init() throws {
        let answers = self.answers
        fake = try FakeHomeserver(answer: { request in answers.answer(request) })
    }

    /// The state the answers read and count in (a class: the server's closure and this object share it).
    private final class Answers: Sendable {
        let state = Mutex(State())

        func answer(_ request: HTTPServerRequest) -> HTTPServerResponse {
            BenchHomeserver.answer(request, state: state)
        }
    }

    var counters: Counters { answers.state.withLock { $0.counters } }

    /// Sets who `room` has as joined members (besides the bot): Matrix user ids with displaynames.
    func setMembers(room: String, _ members: [(user: String, name: String)], bot: String) {
        var joined = "{\"joined\":{\"\(bot)\":{}"
        for member in members { joined += ",\"\(member.user)\":{\"display_name\":\"\(member.name)\"}" }
        joined += "}}"
        answers.state.withLock { $0.members[room] = Data(joined.utf8) }
    }

    /// Serves until ``stop()``.
    func run() async { await fake.run() }

    func stop() { fake.stop() }

    private static let empty = json("{}")
    private static let registered = json(#"{"user_id":"@_xmpp_bench:localhost"}"#)
    private static let joined = json(#"{"room_id":"!joined:localhost"}"#)
    private static let member = json(#"{"membership":"join"}"#)
    private static let pong = json(#"{"duration_ms":1}"#)

    private static func json(_ text: String) -> HTTPServerResponse {
        HTTPServerResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(text.utf8))
    }

    fileprivate static func answer(_ request: HTTPServerRequest, state: borrowing Mutex<State>) -> HTTPServerResponse {
        let path = request.path
        let byGhost = request.query.contains { $0.name == "user_id" && ($0.value ?? "").contains("_xmpp_") }
        if path.contains("/send/") {
            MessageTracker.arrived(body: request.body)
            let number = state.withLock { state in
                state.counters.calls += 1
                state.counters.sends += 1
                state.nextEvent += 1
                return state.nextEvent
            }
            return Self.json("{\"event_id\":\"$e\(number)\"}")
        }
        return state.withLock { state in
            state.counters.calls += 1
            if path.hasSuffix("/register") {
                state.counters.registers += 1
                return Self.registered
            }
            if path.contains("/join/") {
                if byGhost { state.counters.ghostJoins += 1 }
                return Self.joined
            }
            if path.contains("/state/m.room.member/") {
                if request.method == "GET" { return Self.member }
                if byGhost { state.counters.ghostMemberStates += 1 }
                state.nextEvent += 1
                return Self.json("{\"event_id\":\"$s\(state.nextEvent)\"}")
            }
            if path.hasSuffix("/joined_members") {
                let segments = path.split(separator: "/")
                let room = segments.count >= 2 ? String(segments[segments.count - 2]).removingPercentEncoding ?? "" : ""
                return HTTPServerResponse(status: 200, headers: ["Content-Type": "application/json"],
                                          body: state.members[room] ?? Data(#"{"joined":{}}"#.utf8))
            }
            if path.hasSuffix("/ping") { return Self.pong }
            return Self.empty
        }
    }
}
