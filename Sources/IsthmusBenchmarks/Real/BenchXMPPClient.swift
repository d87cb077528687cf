import Foundation
import Network
import Synchronization
import XMLStream

/// A minimal XMPP client (c2s) for the real-server benchmark: plain TCP, SASL PLAIN (the test bed's Prosody allows
/// it on loopback), resource binding, MUC join, groupchat. Every groupchat message received goes to `onMessage`
/// with the sender's nick and body; other stanzas are kept for ``waitFor(_:)``. Thread-safe.
final class BenchXMPPClient: Sendable {
    private let connection: TCPConnection
    private let received = Mutex<[XElement]>([])
    private let reader: Task<Void, Never>
    let jid: String

    private init(connection: TCPConnection, jid: String, reader: Task<Void, Never>, received: [XElement]) {
        self.connection = connection
        self.jid = jid
        self.reader = reader
        self.received.withLock { $0 = received }
    }

    struct LoginFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// Connects to `127.0.0.1:port` and logs in as `user@domain`.
    static func connect(port: Int, user: String, domain: String = "localhost", password: String,
                        onMessage: @escaping @Sendable (_ nick: String, _ body: String) -> Void) async throws -> BenchXMPPClient {
        let connection = try await TCPConnection.connect(host: "127.0.0.1", port: port)
        let (outcome, outcomeSink) = AsyncStream.makeStream(of: Result<String, LoginFailed>.self)
        let other = Mutex<[XElement]>([])
        let holder = Mutex<BenchXMPPClient?>(nil)
        let reader = Task {
            var session = Session(connection: connection)
            do {
                outcomeSink.yield(.success(try await session.login(user: user, domain: domain, password: password)))
            } catch {
                outcomeSink.yield(.failure(LoginFailed(description: "\(error)")))
                return
            }
            while let element = try? await session.nextElement() {
                if element.name == "message", element[attribute: "type"] == "groupchat",
                   let from = element[attribute: "from"], let slash = from.firstIndex(of: "/") {
                    let body = element.elements.first { $0.name == "body" }?.text ?? ""
                    onMessage(String(from[from.index(after: slash)...]), body)
                } else if let client = holder.withLock({ $0 }) {
                    client.received.withLock { $0.append(element) }
                } else {
                    other.withLock { $0.append(element) }
                }
            }
        }
        var jid: String?
        for await result in outcome {
            switch result {
            case .success(let bound): jid = bound
            case .failure(let failure):
                connection.abort()
                throw failure
            }
            break
        }
        guard let jid else { throw LoginFailed(description: "connection closed during login") }
        let client = BenchXMPPClient(connection: connection, jid: jid, reader: reader, received: other.withLock { $0 })
        holder.withLock { $0 = client }
        return client
    }

    /// Joins `room` as `nick` (no history); submits the instant-room form when the join created the room.
    func join(room: String, nick: String) async throws {
        try send("<presence to='\(room)/\(nick)'><x xmlns='http://jabber.org/protocol/muc'><history maxstanzas='0'/></x></presence>")
        let answer = try await waitFor("self-presence in \(room)") { element in
            element.name == "presence" && element[attribute: "from"] == "\(room)/\(nick)"
                && (element[attribute: "type"] == "error" || Self.statusCodes(element).contains("110"))
        }
        guard answer[attribute: "type"] != "error" else { throw LoginFailed(description: "join of \(room) refused") }
        if Self.statusCodes(answer).contains("201") {
            try send("<iq type='set' id='instant' to='\(room)'><query xmlns='http://jabber.org/protocol/muc#owner'>"
                     + "<x xmlns='jabber:x:data' type='submit'/></query></iq>")
            _ = try await waitFor("instant room configuration") { $0.name == "iq" && $0[attribute: "id"] == "instant" }
        }
    }

    /// Sends a groupchat message.
    func sendGroupchat(room: String, body: String, id: String) throws {
        try send("<message type='groupchat' to='\(room)' id='\(id)'><body>\(body)</body></message>")
    }

    func close() {
        try? connection.write(Array("</stream:stream>".utf8))
        connection.close()
        reader.cancel()
    }

    private func send(_ text: String) throws { try connection.write(Array(text.utf8)) }

    private func waitFor(_ what: String, timeout: Duration = .seconds(10), _ matches: @escaping (XElement) -> Bool) async throws -> XElement {
        var found: XElement?
        _ = await waitUntil(timeout: timeout, interval: .milliseconds(5)) {
            found = received.withLock { elements in
                guard let index = elements.firstIndex(where: matches) else { return nil }
                return elements.remove(at: index)
            }
            return found != nil
        }
        guard let found else { throw LoginFailed(description: "no \(what) within \(timeout)") }
        return found
    }

    private static func statusCodes(_ presence: XElement) -> [String] {
        presence.elements.filter { $0.name == "x" }.flatMap { $0.elements.filter { $0.name == "status" } }.compactMap { $0[attribute: "code"] }
    }

    /// The connection's reading side during and after login: bytes → stream events, one element at a time.
    private struct Session {
        let connection: TCPConnection
        var inbound: TCPInbound.AsyncIterator
        var parser = XMLStreamParser()
        var pending: [XMLStreamEvent] = []

        init(connection: TCPConnection) {
            self.connection = connection
            inbound = connection.inbound.makeAsyncIterator()
        }

        mutating func nextEvent() async throws -> XMLStreamEvent? {
            while pending.isEmpty {
                guard let chunk = try await inbound.next() else { return nil }
                try parser.feed(chunk, into: &pending)
            }
            return pending.removeFirst()
        }

        mutating func nextElement() async throws -> XElement? {
            while let event = try await nextEvent() {
                if case .element(let element) = event { return element }
                if case .streamEnd = event { return nil }
            }
            return nil
        }

        /// RFC 6120: stream, SASL PLAIN, stream restart, resource binding. Returns the bound JID.
        mutating func login(user: String, domain: String, password: String) async throws -> String {
            let header = "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' "
                + "to='\(domain)' version='1.0'>"
            try connection.write(Array(header.utf8))
            _ = try await nextElement()  // features
            let credentials = Data([0] + Array(user.utf8) + [0] + Array(password.utf8)).base64EncodedString()
            try connection.write(Array("<auth xmlns='urn:ietf:params:xml:ns:xmpp-sasl' mechanism='PLAIN'>\(credentials)</auth>".utf8))
            guard let outcome = try await nextElement(), outcome.name == "success" else { throw LoginFailed(description: "SASL PLAIN refused") }
            parser = XMLStreamParser()
            pending = []
            try connection.write(Array(header.utf8))
            _ = try await nextElement()  // features
            try connection.write(Array(("<iq type='set' id='bind'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'>"
                + "<resource>bench-\(UInt16.random(in: 0...UInt16.max))</resource></bind></iq>").utf8))
            guard let bound = try await nextElement(), bound.name == "iq", bound[attribute: "type"] == "result",
                  let bind = bound.elements.first(where: { $0.name == "bind" }), let jid = bind.elements.first(where: { $0.name == "jid" })?.text else {
                throw LoginFailed(description: "resource binding failed")
            }
            return jid
        }
    }
}
