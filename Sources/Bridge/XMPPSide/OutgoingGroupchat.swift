import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import MessageFormatting
import XMPP

/// What a puppet's groupchat message carries: its body (none for a reaction) and the elements that make it a reply,
/// correction, retraction or reaction. Codable: kept in the message map until the MUC reflects it, so a resend after
/// a restart sends the same stanza.
struct OutgoingGroupchat: Sendable, Equatable, Codable {
    var body: String?
    var references: MessageReferences
    /// A media message's caption, sent as a second message right after this one (a body other than the URL would
    /// stop XMPP clients from rendering the file).
    var caption: String?

    init(body: String?, references: MessageReferences = MessageReferences()) {
        self.body = body
        self.references = references
    }

    /// The form kept in `message_map.payload`; nil for a plain body (kept in `body` as before rich messages).
    var payload: String? {
        guard references != MessageReferences() || caption != nil else { return nil }
        return (try? JSONEncoder().encode(self)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The stanza of a stored mapping: its payload, else its plain body; nil when it has neither.
    init?(mapping: MessageMapping) {
        if let payload = mapping.payload,
           let decoded = try? JSONDecoder().decode(OutgoingGroupchat.self, from: Data(payload.utf8)) {
            self = decoded
        } else if let body = mapping.body {
            self.init(body: body)
        } else {
            return nil
        }
    }

    /// A XEP-0444 set for the message `id` names, as a message with no body (`<store/>`: a room archives it).
    static func reactions(to id: String, _ keys: [String]) -> OutgoingGroupchat {
        OutgoingGroupchat(body: nil, references: MessageReferences(reactions: .init(id: id, keys: keys), store: true))
    }

    /// A XEP-0424 retraction of our message `originID`: the current form naming `id` (the room's stanza-id, else the
    /// origin-id), the older form naming the origin-id, and a fallback body for clients with neither.
    static func retraction(id: String, originID: OriginID) -> OutgoingGroupchat {
        var references = MessageReferences(retractions: [.current(id: id), .legacy(originID: originID.rawValue)], store: true)
        references.fallbacks = [.init(feature: XMPPNamespace.retraction, ranges: nil)]
        return OutgoingGroupchat(body: "/me retracted a previous message, but it's unsupported by your client.", references: references)
    }
}

extension MessageReferences {
    /// `text` with the XEP-0461 quote of `nick`'s `excerpt` in front (plain text only, never a Matrix id), marked as
    /// the reply's XEP-0428 fallback for clients without replies; `text` alone when there is nothing to quote.
    mutating func quoting(_ text: String, nick: String, excerpt: String) -> String {
        let quote = ReplyQuote.make(nick: nick, excerpt: excerpt)
        guard !quote.text.isEmpty else { return text }
        fallbacks = [.init(feature: XMPPNamespace.reply, ranges: [quote.range])]
        return quote.text + text
    }

    /// `body` without the quote a XEP-0461 reply carries for clients without replies (its XEP-0428 fallback ranges).
    func removingReplyQuote(from body: String) -> String {
        guard let ranges = fallbackRanges(for: XMPPNamespace.reply) else { return body }
        return XMPPFallback.removing(ranges: ranges.map { $0.map { CodePointRange(start: $0.lowerBound, end: $0.upperBound) } }, from: body)
    }
}
