import FoundationEssentials
import IsthmusCommon
import IsthmusStore

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
}
