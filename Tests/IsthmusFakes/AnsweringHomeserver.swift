import Foundation
import MatrixAppService
import Synchronization

/// A homeserver for a bridge, as cheap as it can be: ``FakeHomeserver`` (no recording) answering every client-server
/// call at once with plausible JSON (register, profile, join, invite, member state, send → a new event id,
/// joined_members from the room's configured members, appservice ping). Every `/send/` is handed to `onSend` as it
/// arrives. It pushes nothing: transactions are the caller's to send to the bridge's listener.
///
/// Shared by `isthmus-bench` (which notes its messages' arrivals in `onSend`) and the tests' loopback tier
/// (`BridgeTests.LoopbackBridgeTests`, which records them). Thread-safe.
public final class AnsweringHomeserver: Sendable {
    private let fake: FakeHomeserver
    /// The loopback port it listens on.
    public var port: Int { fake.port }
    public var server: HTTPServer { fake.server }
    private let answers: Answers

    /// What the homeserver was asked so far.
    public struct Counters: Sendable {
        /// Every request.
        public var calls = 0
        /// `PUT …/send/…`: events sent.
        public var sends = 0
        public var registers = 0
        /// Joins as an appservice ghost (`user_id` in the bridge's `_xmpp_` namespace).
        public var ghostJoins = 0
        /// Member state events set as a ghost (its displayname and avatar).
        public var ghostMemberStates = 0
    }

    fileprivate struct State {
        var counters = Counters()
        var nextEvent = 0
        /// `/joined_members` bodies by room id.
        var members: [String: Data] = [:]
    }

    /// Listens on a free loopback port (serving starts with ``run()``). `onSend` gets each `/send/` request before it
    /// is answered, on the server's task; it must be quick and must not call the homeserver.
    public init(onSend: @escaping @Sendable (HTTPServerRequest) -> Void = { _ in }) throws {
        let answers = Answers(onSend: onSend)
        self.answers = answers
        fake = try FakeHomeserver(answer: { request in answers.answer(request) })
    }

    /// The state the answers read and count in (a class: the server's closure and this object share it).
    private final class Answers: Sendable {
        let state = Mutex(State())
        let onSend: @Sendable (HTTPServerRequest) -> Void

        init(onSend: @escaping @Sendable (HTTPServerRequest) -> Void) { self.onSend = onSend }

        func answer(_ request: HTTPServerRequest) -> HTTPServerResponse {
            AnsweringHomeserver.answer(request, state: state, onSend: onSend)
        }
    }

    public var counters: Counters { answers.state.withLock { $0.counters } }

    /// Sets who `room` has as joined members (besides the bot): Matrix user ids with displaynames.
    public func setMembers(room: String, _ members: [(user: String, name: String)], bot: String) {
        var joined = "{\"joined\":{\"\(bot)\":{}"
        for member in members { joined += ",\"\(member.user)\":{\"display_name\":\"\(member.name)\"}" }
        joined += "}}"
        answers.state.withLock { $0.members[room] = Data(joined.utf8) }
    }

    /// Serves until ``stop()``.
    public func run() async { await fake.run() }

    public func stop() { fake.stop() }

    private static let empty = json("{}")
    private static let registered = json(#"{"user_id":"@_xmpp_bench:localhost"}"#)
    private static let joined = json(#"{"room_id":"!joined:localhost"}"#)
    private static let member = json(#"{"membership":"join"}"#)
    private static let pong = json(#"{"duration_ms":1}"#)

    private static func json(_ text: String) -> HTTPServerResponse {
        HTTPServerResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(text.utf8))
    }

    fileprivate static func answer(_ request: HTTPServerRequest, state: borrowing Mutex<State>,
                                   onSend: @Sendable (HTTPServerRequest) -> Void) -> HTTPServerResponse {
        let path = request.path
        let byGhost = request.query.contains { $0.name == "user_id" && ($0.value ?? "").contains("_xmpp_") }
        if path.contains("/send/") {
            onSend(request)
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
