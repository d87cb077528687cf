import FoundationEssentials
import IsthmusCommon
import Matrix
import MatrixClient
import MessageFormatting
import XMLStream
import XMPP

/// XEP-0313 queries to a hosted room, answered from the Matrix timeline as the asker's ghost sees it: archive ids are
/// event ids; `after-id`/`before-id` (or RSM `after`/`before`) page from that event's place in the timeline, nothing
/// asks for the last page; `start`/`end` filter by time.
extension GatewayRooms {
    /// The largest page one query answers.
    static let maxArchivePage = 100
    /// The most timeline pages one query reads (a stretch of state events could otherwise cost without end).
    static let maxArchiveReads = 10

    /// What a timeline message reads as in XMPP: without a reply's quote of the message it answers (which names its
    /// author by Matrix id), an emote with `/me`.
    static func text(of content: MessageContent) -> String {
        let body = content.relatesTo?.replyToEventID == nil ? content.body : MatrixReplyFallback.strip(body: content.body, formattedBody: nil).body
        return content.messageType == .emote ? "/me " + body : body
    }

    func archiveQuery(_ iq: IQ, _ query: MAMQuery, room: JID) async {
        guard iq.type == .set, let asker = iq.from else {
            try? await xmpp.send(.iq(iq.errorResponse(StanzaError(type: .modify, condition: .badRequest))))
            return
        }
        guard let machine = machineView(room), let matrixRoom = machine.matrixRoom, let reader = machine.occupants[asker.bare]?.ghost else {
            try? await xmpp.send(.iq(iq.errorResponse(StanzaError(type: .auth, condition: .forbidden, text: "Join the room to read its archive"))))
            return
        }
        let limit = min(max(query.rsm?.max ?? 50, 1), Self.maxArchivePage)
        let after = query.afterID?.rawValue ?? query.rsm?.after.flatMap { $0.isEmpty ? nil : $0 }
        let before = query.beforeID?.rawValue ?? query.rsm?.before.flatMap { $0.isEmpty ? nil : $0 }
        // Ids that are no event ids name nothing here.
        if let id = after ?? before, EventID(id) == nil {
            try? await xmpp.send(.iq(iq.errorResponse(StanzaError(type: .cancel, condition: .itemNotFound, text: "No such archive id"))))
            return
        }
        // With `start` alone the page is the oldest messages since then: read back to it, then keep the first ones.
        let fromStart = query.start != nil && after == nil && before == nil
        // A timeline page counts state events too: read on until `limit` messages are found or the timeline ends.
        var messages: [(event: ClientEvent, content: MessageContent, stamp: Date)] = []
        var complete = false
        do throws(MatrixError) {
            var token: String?
            let direction: MatrixClient.TimelineDirection
            if let after, let event = EventID(after) {
                token = try await client.eventContext(event, in: matrixRoom, as: reader).end
                direction = .forward
            } else if let before, let event = EventID(before) {
                token = try await client.eventContext(event, in: matrixRoom, as: reader).start
                direction = .backward
            } else {
                direction = .backward
            }
            reading: for _ in 0..<Self.maxArchiveReads {
                let page = try await client.roomMessages(in: matrixRoom, from: token, direction: direction, limit: max(limit, 20), as: reader)
                for event in page.events {
                    guard case .message(let content) = event.content, content.relatesTo?.replacedEventID == nil else { continue }
                    let stamp = Date(timeIntervalSince1970: Double(event.originServerTS) / 1000)
                    if let start = query.start, stamp < start {
                        if fromStart {
                            complete = true   // back at the start: what was read is the whole range
                            break reading
                        }
                        continue
                    }
                    if let end = query.end, stamp > end { continue }
                    messages.append((event, content, stamp))
                    if messages.count == limit && !fromStart { break reading }
                }
                guard let next = page.end, !page.events.isEmpty else {
                    complete = true
                    break
                }
                token = next
            }
        } catch {
            let condition: StanzaErrorCondition = error.errcode == .notFound || error.status == 404 ? .itemNotFound : .serviceUnavailable
            try? await xmpp.send(.iq(iq.errorResponse(StanzaError(type: .cancel, condition: condition, text: "The Matrix room's timeline could not be read"))))
            return
        }
        if after == nil { messages.reverse() }
        if fromStart, messages.count > limit {
            messages = Array(messages.prefix(limit))
            complete = false
        }
        var sent: [EventID] = []
        for (event, content, stamp) in messages {
            let nick = machine.senderNick(event.sender)
            guard let from = machine.address.occupant(nick) else { continue }
            let archived = Message(type: .groupchat, from: from, body: Self.text(of: content))
            let forwarded = XElement("forwarded", namespace: XMPPNamespace.forward,
                                     children: [.element(Delay(stamp: stamp).element), .element(archived.element)])
            let result = XElement("result", namespace: XMPPNamespace.mam, ["queryid": query.queryID, "id": event.eventID.rawValue],
                                  children: [.element(forwarded)])
            try? await xmpp.send(.message(Message(from: room, to: asker, extensions: [result])))
            sent.append(event.eventID)
        }
        let fin = MAMFin(complete: complete, rsm: RSMSet(first: sent.first?.rawValue, last: sent.last?.rawValue))
        try? await xmpp.send(.iq(iq.result(payload: .mamFin(fin))))
    }
}
