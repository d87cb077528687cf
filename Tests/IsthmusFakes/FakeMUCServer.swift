import Foundation
import Network
import Synchronization
import XMLStream

/// A fake XMPP server for the bridge, as cheap as it can be: it accepts a XEP-0114 component connection (any
/// handshake digest) and acts as the MUC service for every room JID the component talks to.
///
/// MUC behaviour (XEP-0045, the parts the bridge uses): a join is answered with the other occupants' presences, then
/// the joiner's presence to everyone else, then the self-presence (status 110); a taken nick gets `<conflict/>`; a
/// second join with another nick is a nick change (303); leaving is broadcast. A groupchat message from an occupant
/// is reflected to every occupant the component hosts, with the room's `<stanza-id>`; a non-occupant gets
/// `not-acceptable`. MAM queries get an empty `<fin complete='true'/>`, every other request an empty result.
/// Simulated XMPP users (``addXMPPUser(room:nick:)``) are occupants nobody connects for; ``inject(room:nick:body:)``
/// makes one of them speak. What the component itself says in a room is handed to `onGroupchat` as it is reflected.
///
/// Shared by `isthmus-bench` (whose figures depend on it staying cheap: outgoing stanzas are built from byte templates,
/// and nothing is recorded unless `onGroupchat` records it) and the tests' loopback tier (`BridgeTests.LoopbackBridgeTests`).
/// Thread-safe: all state is under one lock, taken by the reader task of each connection and by the public methods;
/// one component connection is served at a time (a newer handshake replaces the older connection).
public final class FakeMUCServer: Sendable {
    /// The loopback port it listens on.
    public let port: Int
    private let listener: TCPListener
    private let state = Mutex(State())
    private let onGroupchat: @Sendable (Groupchat) -> Void

    /// A groupchat message from an occupant the component hosts, as the fake reflected it to every hosted occupant.
    public struct Groupchat: Sendable {
        /// The room's bare JID.
        public var room: String
        /// The sender's nick in the room.
        public var nick: String
        /// The `<body>`, nil when the message had none.
        public var body: String?
        /// The stanza's `id` attribute (the fake makes one up when it had none).
        public var id: String
        /// The XEP-0359 `<origin-id>` the component put on it, if any.
        public var originID: String?
        /// The XEP-0359 `<stanza-id by=room>` the fake gave its reflection.
        public var stanzaID: String
    }

    private struct Occupant {
        var nick: String
        /// The real JID of an occupant the component hosts; nil for a simulated XMPP user.
        var jid: String?
        var occupantID: String
    }

    private struct Room {
        var byNick: [String: Occupant] = [:]
        /// Nick of each hosted occupant by real JID.
        var nickOf: [String: String] = [:]
        /// Hosted occupants' real JIDs in join order (every copy of room traffic goes to each).
        var hosted: [String] = []
    }

    /// What the fake did so far.
    public struct Counters: Sendable {
        /// Joins of hosted occupants (a nick change is not one).
        public var joins = 0
        public var leaves = 0
        /// Groupchat messages the component sent from hosted occupants (each one reflected).
        public var groupchatsIn = 0
        /// Copies of reflected messages written to the component (one per hosted occupant of the room).
        public var copiesOut = 0
        /// Component handshakes accepted.
        public var connections = 0
    }

    private struct State {
        var rooms: [String: Room] = [:]
        var connection: TCPConnection?
        var connected = false
        var counters = Counters()
        var nextStanzaID = 0
    }

    /// Listens on a free loopback port (serving starts with ``run()``). `onGroupchat` sees every message the component
    /// sends from a hosted occupant, in order; it runs under the fake's lock, so it must be quick and must not call the
    /// fake.
    public init(onGroupchat: @escaping @Sendable (Groupchat) -> Void = { _ in }) throws {
        listener = try TCPListener()
        port = listener.port
        self.onGroupchat = onGroupchat
    }

    /// Accepts component connections until ``close()`` (the newest replaces an older one).
    public func run() async {
        await withDiscardingTaskGroup { group in
            do {
                for try await connection in listener.connections {
                    group.addTask { await self.serve(connection) }
                }
            } catch {}
        }
    }

    /// Stops listening and drops the component's connection; ``run()`` returns.
    public func close() {
        listener.close()
        state.withLock { $0.connection?.abort() }
    }

    public var counters: Counters { state.withLock { $0.counters } }
    /// Whether a component has completed its handshake and is still connected.
    public var isConnected: Bool { state.withLock { $0.connected } }

    /// Number of occupants hosted by the component across all rooms.
    public var hostedOccupants: Int { state.withLock { $0.rooms.values.reduce(0) { $0 + $1.hosted.count } } }

    /// Adds a simulated XMPP user to `room` (bare JID); it is among the occupants a join is told about from then on.
    public func addXMPPUser(room: String, nick: String) {
        state.withLock { state in
            state.rooms[room, default: Room()].byNick[nick] = Occupant(nick: nick, jid: nil, occupantID: Self.occupantID(room, nick))
        }
    }

    /// A simulated XMPP user says `body` in `room`: one reflection to every hosted occupant. False when no
    /// component is connected.
    @discardableResult
    public func inject(room: String, nick: String, body: String) -> Bool {
        state.withLock { state in
            guard state.connected, let connection = state.connection, let occupant = state.rooms[room]?.byNick[nick] else { return false }
            state.nextStanzaID += 1
            let id = "x\(state.nextStanzaID)"
            return Self.reflect(room: room, from: occupant, id: id, originID: nil, body: body, stanzaID: "s\(state.nextStanzaID)",
                                state: &state, connection: connection)
        }
    }

    // MARK: Connection

    private func serve(_ connection: TCPConnection) async {
        let parser = XMLStreamParser(limits: .init(maxStanzaBytes: 1 << 20))
        var events: [XMLStreamEvent] = []
        do {
            for try await chunk in connection.inbound {
                events.removeAll(keepingCapacity: true)
                try parser.feed(chunk, into: &events)
                for event in events { handle(event, on: connection) }
            }
        } catch {}
        state.withLock { state in
            guard state.connection === connection else { return }
            state.connected = false
            state.connection = nil
            for key in state.rooms.keys {
                state.rooms[key]!.hosted.removeAll()
                state.rooms[key]!.nickOf.removeAll()
                state.rooms[key]!.byNick = state.rooms[key]!.byNick.filter { $0.value.jid == nil }
            }
        }
        connection.abort()
    }

    private func handle(_ event: XMLStreamEvent, on connection: TCPConnection) {
        switch event {
        case .streamStart(let header):
            let domain = header.to ?? "component"
            try? connection.write(Array(("<?xml version='1.0'?><stream:stream xmlns:stream='http://etherx.jabber.org/streams' "
                + "xmlns='jabber:component:accept' from='\(domain)' id='bench-stream'>").utf8))
        case .streamEnd:
            try? connection.write(Array("</stream:stream>".utf8))
            connection.close()
        case .element(let element):
            state.withLock { state in
                if element.name == "handshake" {
                    state.connection?.abort()
                    state.connection = connection
                    state.connected = true
                    state.counters.connections += 1
                    try? connection.write(Array("<handshake/>".utf8))
                    return
                }
                guard state.connection === connection else { return }
                switch element.name {
                case "message": message(element, state: &state, connection: connection)
                case "presence": presence(element, state: &state, connection: connection)
                case "iq": iq(element, connection: connection)
                default: break
                }
            }
        }
    }

    // MARK: Stanzas

    private func message(_ element: XElement, state: inout State, connection: TCPConnection) {
        guard element[attribute: "type"] == "groupchat", let from = element[attribute: "from"],
              let to = element[attribute: "to"] else { return }
        let room = Self.bare(to)
        guard let nick = state.rooms[room]?.nickOf[from], let occupant = state.rooms[room]?.byNick[nick] else {
            let id = element[attribute: "id"].map { " id='\(Self.escape($0))'" } ?? ""
            try? connection.write(Array(("<message type='error' from='\(Self.escape(room))' to='\(Self.escape(from))'\(id)>"
                + "<error type='cancel'><not-acceptable xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></message>").utf8))
            return
        }
        var body: String?
        var originID: String?
        for child in element.elements {
            if child.name == "body" { body = child.text } else if child.name == "origin-id" { originID = child[attribute: "id"] }
        }
        state.counters.groupchatsIn += 1
        state.nextStanzaID += 1
        let id = element[attribute: "id"] ?? "m\(state.nextStanzaID)", stanzaID = "s\(state.nextStanzaID)"
        onGroupchat(Groupchat(room: room, nick: nick, body: body, id: id, originID: originID, stanzaID: stanzaID))
        Self.reflect(room: room, from: occupant, id: id, originID: originID, body: body ?? "", stanzaID: stanzaID,
                     state: &state, connection: connection)
    }

    /// Writes one copy of the message to each hosted occupant of `room`, in one write (XEP-0045 §7.4, with XEP-0359's
    /// `<stanza-id>` and XEP-0421's `<occupant-id>`). False when the write failed.
    @discardableResult
    private static func reflect(room: String, from occupant: Occupant, id: String, originID: String?, body: String,
                                stanzaID: String, state: inout State, connection: TCPConnection) -> Bool {
        guard let hosted = state.rooms[room]?.hosted, !hosted.isEmpty else { return true }
        let head = Array("<message type='groupchat' from='\(escape(room))/\(escape(occupant.nick))' id='\(escape(id))' to='".utf8)
        var tail = "'><body>\(escape(body))</body>"
        if let originID { tail += "<origin-id xmlns='urn:xmpp:sid:0' id='\(escape(originID))'/>" }
        tail += "<stanza-id xmlns='urn:xmpp:sid:0' id='\(stanzaID)' by='\(escape(room))'/>"
            + "<occupant-id xmlns='urn:xmpp:occupant-id:0' id='\(occupant.occupantID)'/></message>"
        let tailBytes = Array(tail.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(hosted.count * (head.count + tailBytes.count + 48))
        for jid in hosted {
            out += head
            out += jid.utf8
            out += tailBytes
        }
        state.counters.copiesOut += hosted.count
        do {
            try connection.write(out)
            return true
        } catch {
            return false
        }
    }

    private func presence(_ element: XElement, state: inout State, connection: TCPConnection) {
        guard let from = element[attribute: "from"], let to = element[attribute: "to"],
              let slash = to.firstIndex(of: "/") else { return }
        let room = String(to[..<slash]), nick = String(to[to.index(after: slash)...])
        var record = state.rooms[room] ?? Room()
        var out: [UInt8] = []
        if element[attribute: "type"] == "unavailable" {
            guard let current = record.nickOf[from] else { return }
            let occupant = record.byNick[current]!
            for jid in record.hosted {
                out += Self.presenceBytes(room: room, occupant, to: jid, type: "unavailable", codes: jid == from ? [110] : [])
            }
            record.byNick[current] = nil
            record.nickOf[from] = nil
            record.hosted.removeAll { $0 == from }
            state.counters.leaves += 1
        } else if let existing = record.byNick[nick], existing.jid != from {
            out += Array(("<presence type='error' from='\(Self.escape(to))' to='\(Self.escape(from))'><x xmlns='http://jabber.org/protocol/muc'/>"
                + "<error type='cancel'><conflict xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></error></presence>").utf8)
        } else if let current = record.nickOf[from] {
            guard current != nick else { return }  // a presence update: nothing to do
            // XEP-0045 §7.6: unavailable from the old nick with 303 and the new nick, then available from the new one.
            var occupant = record.byNick.removeValue(forKey: current)!
            for jid in record.hosted {
                out += Self.presenceBytes(room: room, occupant, to: jid, type: "unavailable",
                                          codes: jid == from ? [303, 110] : [303], newNick: nick)
            }
            occupant.nick = nick
            record.byNick[nick] = occupant
            record.nickOf[from] = nick
            for jid in record.hosted {
                out += Self.presenceBytes(room: room, occupant, to: jid, codes: jid == from ? [110] : [])
            }
        } else {
            let occupant = Occupant(nick: nick, jid: from, occupantID: Self.occupantID(room, from))
            for other in record.byNick.values {
                out += Self.presenceBytes(room: room, other, to: from)
            }
            for jid in record.hosted {
                out += Self.presenceBytes(room: room, occupant, to: jid)
            }
            out += Self.presenceBytes(room: room, occupant, to: from, codes: [110])
            record.byNick[nick] = occupant
            record.nickOf[from] = nick
            record.hosted.append(from)
            state.counters.joins += 1
        }
        state.rooms[room] = record
        if !out.isEmpty { try? connection.write(out) }
    }

    private func iq(_ element: XElement, connection: TCPConnection) {
        guard let type = element[attribute: "type"], type == "get" || type == "set" else { return }
        let id = Self.escape(element[attribute: "id"] ?? "")
        let from = Self.escape(element[attribute: "from"] ?? ""), to = Self.escape(element[attribute: "to"] ?? "")
        var payload = ""
        if let query = element.elements.first(where: { $0.name == "query" }), query.namespace == "urn:xmpp:mam:2" {
            payload = "<fin xmlns='urn:xmpp:mam:2' complete='true'><set xmlns='http://jabber.org/protocol/rsm'><count>0</count></set></fin>"
        }
        try? connection.write(Array("<iq type='result' id='\(id)' from='\(to)' to='\(from)'>\(payload)</iq>".utf8))
    }

    // MARK: Templates

    private static func presenceBytes(room: String, _ occupant: Occupant, to jid: String, type: String? = nil,
                                      codes: [Int] = [], newNick: String? = nil) -> [UInt8] {
        var text = "<presence from='\(escape(room))/\(escape(occupant.nick))' to='\(escape(jid))'"
        if let type { text += " type='\(type)'" }
        text += "><occupant-id xmlns='urn:xmpp:occupant-id:0' id='\(occupant.occupantID)'/>"
            + "<x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='member' role='participant'"
        if let newNick { text += " nick='\(escape(newNick))'" }
        text += "/>"
        for code in codes { text += "<status code='\(code)'/>" }
        text += "</x></presence>"
        return Array(text.utf8)
    }

    private static func occupantID(_ room: String, _ key: String) -> String {
        var hash: UInt64 = 1469598103934665603
        for byte in (room + "\u{0}" + key).utf8 { hash = (hash ^ UInt64(byte)) &* 1099511628211 }
        return String(hash, radix: 36)
    }

    private static func bare(_ jid: String) -> String {
        guard let slash = jid.firstIndex(of: "/") else { return jid }
        return String(jid[..<slash])
    }

    /// `text` escaped for a single-quoted attribute (also safe as character data).
    private static func escape(_ text: String) -> String {
        var buffer: [UInt8] = []
        XMLEscaping.appendAttributeValue(text, to: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}
