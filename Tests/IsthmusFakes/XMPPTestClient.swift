import Foundation
import IsthmusCommon
import Network
import XMLStream
import XMPP

/// A minimal XMPP client (c2s) acting as a real user in tests and in `isthmus-bench`'s real-server part: plain TCP,
/// SASL PLAIN, resource binding, MUC join, groupchat. Prosody on the test bed allows plain connections with PLAIN.
/// `Sendable`; stanzas received after login are queued for ``nextStanza(within:_:where:)`` — but for a client made
/// with an `onGroupchat` handler, groupchat messages go to the handler as they arrive (sender's nick and body, read
/// from the element without building a ``Message``: the benchmark counts thousands a second) and are not queued.
///
/// Fails loudly: once the server sends something that is not well-formed XML or not a valid stanza, every wait
/// that is not satisfied by what was queued before throws ``ReceiveFailed`` with the parse error.
public final class XMPPTestClient: Sendable {
    /// The bound full JID.
    public let jid: JID
    private let connection: TCPConnection
    private let stanzas: AsyncQueue<Stanza>
    private let pump: BackgroundTask

    /// What the server sent could not be read; ends the client's stream of stanzas.
    public struct ReceiveFailed: Error, CustomStringConvertible {
        /// The XML or stanza parse error.
        public var error: any Error
        /// The element that did not make a valid stanza (nil for an XML error).
        public var element: XElement?
        public var description: String {
            "the XMPP test client could not read what the server sent: \(error)"
                + (element.map { " in \(XMLSerializer.string(of: $0))" } ?? "")
        }
    }

    /// An answer that is not what the request asks for.
    public struct UnexpectedAnswer: Error, CustomStringConvertible {
        public var request: String
        public var element: XElement
        public var description: String { "unexpected answer to \(request): \(XMLSerializer.string(of: element))" }

        public init(request: String, element: XElement) {
            self.request = request
            self.element = element
        }
    }

    /// Why logging in failed.
    public struct LoginFailed: Error, CustomStringConvertible {
        public var step: String
        public var element: XElement?
        public var description: String { "login failed at \(step): \(element.map { XMLSerializer.string(of: $0) } ?? "-")" }
    }

    /// What a client made with one is handed for each groupchat message: the sender's nick and the body.
    public typealias GroupchatHandler = @Sendable (_ nick: String, _ body: String) -> Void

    private init(jid: JID, connection: TCPConnection, reader: sending StreamReader, onGroupchat: GroupchatHandler?) {
        self.jid = jid
        self.connection = connection
        let stanzas = AsyncQueue<Stanza>()
        self.stanzas = stanzas
        // The reader moves into the pump task; nothing else touches it afterwards.
        var reader = reader
        pump = BackgroundTask {
            while true {
                let event: XMLStreamEvent
                do {
                    event = try await reader.next()
                } catch is StreamReader.Ended {
                    break
                } catch is CancellationError {
                    break
                } catch {
                    stanzas.finish(throwing: ReceiveFailed(error: error))
                    return
                }
                guard case .element(let element) = event else { break }
                if let onGroupchat, let (nick, body) = Self.groupchat(element) {
                    onGroupchat(nick, body)
                    continue
                }
                do {
                    stanzas.append(try Stanza(element: element))
                } catch {
                    stanzas.finish(throwing: ReceiveFailed(error: error, element: element))
                    return
                }
            }
            stanzas.finish()
        }
    }

    deinit { connection.abort() }

    /// Connects to `host:port`, logs in as `user@domain` with SASL PLAIN and binds `resource`, within `seconds`.
    public static func connect(
        host: String = "127.0.0.1", port: Int, user: String, domain: String, password: String,
        resource: String = "test-\(UUID().uuidString.prefix(8))", within seconds: Double = 10,
        onGroupchat: GroupchatHandler? = nil
    ) async throws -> XMPPTestClient {
        let connection = try await TCPConnection.connect(host: host, port: port)
        do {
            return try await withDeadline("login of \(user)@\(domain)", seconds: seconds) {
                try await login(connection, user: user, domain: domain, password: password, resource: resource, onGroupchat: onGroupchat)
            }
        } catch {
            connection.abort()
            throw error
        }
    }

    private static func login(
        _ connection: TCPConnection, user: String, domain: String, password: String, resource: String, onGroupchat: GroupchatHandler?
    ) async throws -> XMPPTestClient {
        var reader = StreamReader(connection)
        let header = XMLSerializer.xmlDeclaration + XMLSerializer.streamStart(
            namespace: XMPPNamespace.streams, contentNamespace: XMPPNamespace.client,
            attributes: ["to": domain, "version": "1.0"])
        // RFC 6120 §6: SASL PLAIN (RFC 4616) on the first stream.
        try connection.write(header)
        _ = try await reader.next()
        let features = try await reader.nextElement()
        guard features.child("mechanisms", namespace: XMPPNamespace.sasl) != nil else {
            throw LoginFailed(step: "stream features", element: features)
        }
        let credentials = Data(([0] + Array(user.utf8) + [0] + Array(password.utf8))).base64EncodedString()
        try connection.write(XMLSerializer.bytes(of: XElement(
            "auth", namespace: XMPPNamespace.sasl, ["mechanism": "PLAIN"], children: [.text(credentials)]),
            defaultNamespace: XMPPNamespace.client))
        let outcome = try await reader.nextElement()
        guard outcome.name == "success" else { throw LoginFailed(step: "SASL PLAIN", element: outcome) }
        // §6.4.6: restart the stream, then bind a resource (§7).
        reader.reset()
        try connection.write(header)
        _ = try await reader.next()
        _ = try await reader.nextElement()
        let bind = IQ(type: .set, id: StanzaAttributeID("bind")!, payload: .other(XElement(
            "bind", namespace: XMPPNamespace.bind, children: [.element(XElement("resource", namespace: XMPPNamespace.bind, children: [.text(resource)]))])))
        try connection.write(XMLSerializer.bytes(of: bind.element))
        let bound = try IQ(element: try await reader.nextElement())
        guard case .other(let payload)? = bound.payload, let text = payload.child("jid", namespace: XMPPNamespace.bind)?.text,
              let jid = JID(text) else {
            throw LoginFailed(step: "resource binding", element: bound.element)
        }
        return XMPPTestClient(jid: jid, connection: connection, reader: reader, onGroupchat: onGroupchat)
    }

    /// A groupchat message's sender nick (the resource of `from`) and body, read off the element.
    private static func groupchat(_ element: XElement) -> (String, String)? {
        guard element.name == "message", element[attribute: "type"] == "groupchat", let from = element[attribute: "from"],
              let slash = from.firstIndex(of: "/") else { return nil }
        return (String(from[from.index(after: slash)...]), element.elements.first { $0.name == "body" }?.text ?? "")
    }

    /// Sends a stanza (no `from`: the server stamps our JID).
    public func send(_ stanza: Stanza) throws {
        try connection.write(XMLSerializer.bytes(of: stanza.element))
    }

    /// The next received stanza that matches, waiting at most `seconds`; others stay queued.
    public func nextStanza(
        within seconds: Double = 10, _ what: String = "a stanza", where matches: @escaping @Sendable (Stanza) -> Bool = { _ in true }
    ) async throws -> Stanza {
        try await stanzas.next(within: seconds, what, where: matches)
    }

    /// What was received and not yet read, oldest first (no waiting): to check that something did not arrive before
    /// a sentinel that did.
    public var queuedStanzas: [Stanza] { stanzas.pending }

    /// The next received message that matches.
    public func nextMessage(
        within seconds: Double = 10, _ what: String = "a message", where matches: @escaping @Sendable (Message) -> Bool = { _ in true }
    ) async throws -> Message {
        let stanza = try await nextStanza(within: seconds, what) { stanza in
            if case .message(let message) = stanza { matches(message) } else { false }
        }
        guard case .message(let message) = stanza else { fatalError("unreachable") }
        return message
    }

    /// The next received presence that matches.
    public func nextPresence(
        within seconds: Double = 10, _ what: String = "a presence", where matches: @escaping @Sendable (Presence) -> Bool = { _ in true }
    ) async throws -> Presence {
        let stanza = try await nextStanza(within: seconds, what) { stanza in
            if case .presence(let presence) = stanza { matches(presence) } else { false }
        }
        guard case .presence(let presence) = stanza else { fatalError("unreachable") }
        return presence
    }

    /// Joins `room` as `nick` without history (XEP-0045 §7.2) and returns the self-presence; configures the room as
    /// an instant room when the join created it. Throws the presence error when refused.
    @discardableResult
    public func joinRoom(_ room: JID, nick: String, within seconds: Double = 10) async throws -> Presence {
        let occupant = room.bare.with(resource: nick)!
        try send(.presence(Presence(to: occupant, mucJoin: MUCJoinRequest(history: MUCHistoryRequest.none))))
        let answer = try await nextPresence(within: seconds, "self-presence in \(room)") { presence in
            presence.from == occupant && (presence.type == .error || presence.statusCodes.contains(.selfPresence))
        }
        if let error = answer.error { throw error }
        if answer.statusCodes.contains(.roomCreated) {
            let configure = IQ(type: .set, to: room.bare, payload: .mucOwner(DataForm(type: "submit")))
            try send(.iq(configure))
            let result = try await nextStanza(within: seconds, "instant room configuration") { stanza in
                if case .iq(let iq) = stanza { iq.id == configure.id } else { false }
            }
            if case .iq(let iq) = result, let error = iq.error { throw error }
        }
        return answer
    }

    /// XEP-0030 disco#info of `entity` (e.g. a room: does it archive?). Throws the error the entity answers.
    public func discoInfo(of entity: JID, within seconds: Double = 10) async throws -> DiscoInfo {
        let request = IQ(type: .get, to: entity, payload: .discoInfo(DiscoInfo()))
        try send(.iq(request))
        let answer = try await nextStanza(within: seconds, "disco#info of \(entity)") { stanza in
            if case .iq(let iq) = stanza { iq.id == request.id } else { false }
        }
        guard case .iq(let iq) = answer else { fatalError("unreachable") }
        if let error = iq.error { throw error }
        guard case .discoInfo(let info)? = iq.payload else { throw UnexpectedAnswer(request: "disco#info of \(entity)", element: iq.element) }
        return info
    }

    /// Sends a groupchat message with an XEP-0359 origin id (also the stanza id) and returns it as sent.
    @discardableResult
    public func sendGroupchat(to room: JID, body: String, originID: OriginID = OriginID(UUID().uuidString)!) throws -> Message {
        let message = Message(type: .groupchat, to: room.bare, id: StanzaAttributeID(originID.rawValue), body: body, originID: originID)
        try send(.message(message))
        return message
    }

    /// Closes the stream and the connection.
    public func close() {
        try? connection.write(XMLSerializer.streamEnd())
        connection.close()
    }
}
