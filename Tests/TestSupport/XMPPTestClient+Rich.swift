import Foundation
import IsthmusCommon
import XMLStream
import XMPP

/// Rich messages from a test client: any groupchat stanza, its reflection by the room, IQ requests.
extension XMPPTestClient {
    /// Sends a groupchat message with `extensions` (see ``RichWire``) and an optional body; its `id` attribute equals its
    /// XEP-0359 origin-id, as most clients do. Returns the message as sent.
    @discardableResult
    public func sendGroupchat(
        to room: JID, body: String?, extensions: [XElement], originID: OriginID = OriginID(UUID().uuidString)!
    ) throws -> Message {
        let message = Message(type: .groupchat, to: room.bare, id: StanzaAttributeID(originID.rawValue), body: body,
                              originID: originID, extensions: extensions)
        try send(.message(message))
        return message
    }

    /// The room's reflection of a message this client sent (matched by origin-id), which carries the room's stanza-id.
    public func reflection(of sent: Message, in room: JID, within seconds: Double = 10) async throws -> Message {
        let originID = sent.originID
        return try await nextMessage(within: seconds, "the reflection of \(sent.originID?.rawValue ?? "?") in \(room)") {
            $0.type == .groupchat && $0.from?.bare == room.bare && $0.originID == originID
        }
    }

    /// Sends a groupchat message and returns the room's reflection of it (with the stanza-id every occupant sees).
    public func sendAndReflect(to room: JID, body: String?, extensions: [XElement] = []) async throws -> Message {
        let sent = try sendGroupchat(to: room, body: body, extensions: extensions)
        return try await reflection(of: sent, in: room)
    }

    /// Sends an IQ request and returns the response (result or error) with the same id.
    public func request(_ iq: IQ, within seconds: Double = 10) async throws -> IQ {
        try send(.iq(iq))
        let id = iq.id
        let answer = try await nextStanza(within: seconds, "the answer to IQ \(id)") { stanza in
            if case .iq(let response) = stanza { !response.isRequest && response.id == id } else { false }
        }
        guard case .iq(let response) = answer else { fatalError("unreachable") }
        return response
    }

    /// The next groupchat message from the occupant `nick` of `room` that satisfies `matches` (body or not).
    public func nextMessage(
        from room: JID, nick: String, within seconds: Double = 30, _ what: String,
        where matches: @escaping @Sendable (Message) -> Bool = { _ in true }
    ) async throws -> Message {
        try await nextMessage(within: seconds, "\(what) from \(nick) in \(room)") {
            $0.type == .groupchat && $0.from?.bare == room.bare && $0.from?.resource == nick && matches($0)
        }
    }

    /// Every groupchat message from the occupant `nick` (body or not), up to and including the one whose body is
    /// `sentinel`. Send the sentinel after everything else: anything doubled before it is then in the list.
    public func messages(
        from room: JID, nick: String, untilBody sentinel: String, within seconds: Double = 30
    ) async throws -> [Message] {
        var messages: [Message] = []
        while messages.last?.body != sentinel {
            messages.append(try await nextMessage(from: room, nick: nick, within: seconds, "messages until \(sentinel.debugDescription)"))
        }
        return messages
    }
}
