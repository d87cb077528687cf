import IsthmusCommon
import MessageFormatting

/// Rich text both ways (formatting, mentions, reply fallbacks), on top of the plain rules of ``MessageTranslation``.
/// Pure: the portal machine passes in who is in the room.
///
/// - XMPP → Matrix: `body` stays byte-exact (minus a reply's XEP-0428 fallback quote when the reply is bridged as a
///   Matrix reply); XEP-0393 styling adds a `formatted_body`; a leading `Nick:` / `Nick,` naming a Matrix user's
///   occupant becomes a pill and `m.mentions`.
/// - Matrix → XMPP: `formatted_body`, when present, is the source (its pills become MUC nicks; the plain `body` of a
///   message with pills often carries Matrix ids); a legacy `<mx-reply>` fallback is stripped; a plain body that an
///   XMPP client would style by accident is sent with `<unstyled/>`.
enum RichTranslation {
    /// The Matrix message for an XMPP body. `nicks`: the Matrix users' occupants by nick (for mentions).
    static func toMatrix(_ body: String, unstyled: Bool, nicks: [String: UserID]) -> OutgoingMatrixMessage {
        var message = MessageTranslation.toMatrix(body)
        let text = message.body
        var mentions: [UserID] = []
        // Most messages carry neither styling nor an address: both checks are skipped by a scan for the characters
        // they need (the message path's cost; see docs/performance.md).
        var html = PlainBodyStyling.needsUnstyled(text) ? StylingToHTML.convert(text, unstyled: unstyled) : nil
        if !nicks.isEmpty, Self.mayAddressSomeone(text),
           let found = LeadingMention.find(in: text, nicks: Array(nicks.keys)), let user = nicks[found.nick] {
            mentions.append(user)
            html = MentionPill.formattedBody(body: text, mention: found, user: user, unstyled: unstyled)
        }
        message.html = html
        message.mentions = mentions
        return message
    }

    /// The XMPP body for a Matrix message and whether it must be marked `<unstyled/>`; nil for types not bridged.
    /// `nick` gives a mentioned user's MUC nick (their ghost's occupant or their puppet).
    static func toXMPP(msgtype: MessageType, body: String, html: String?, nick: (UserID) -> String?)
        -> (body: String, unstyled: Bool, mentions: [UserID])? {
        let stripped = MatrixReplyFallback.strip(body: body, formattedBody: html)
        if let html = stripped.formattedBody {
            let styled = HTMLToStyling.convert(html, mention: nick)
            guard let text = MessageTranslation.toXMPP(msgtype: msgtype, body: styled.body) else { return nil }
            return (text, false, styled.mentions)
        }
        guard let text = MessageTranslation.toXMPP(msgtype: msgtype, body: stripped.body) else { return nil }
        return (text, PlainBodyStyling.needsUnstyled(stripped.body), [])
    }

    /// Whether `text` has a `:` or `,` within its first 128 bytes, where a leading `Nick:` / `Nick,` would end (a
    /// nick is at most 64 characters after sanitizing; MUCs rarely allow longer).
    static func mayAddressSomeone(_ text: String) -> Bool {
        text.utf8.prefix(128).contains { $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ",") }
    }

    /// At most this many characters of a message are kept as the quote of later replies to it.
    static let excerptLength = 200

    /// The start of a message's text, kept for the quote of a reply to it.
    static func excerpt(_ text: String) -> String {
        String(text.unicodeScalars.prefix(excerptLength))
    }
}

extension MatrixRoomEvent {
    /// The metrics' kind of a Matrix event the bridge carries; nil for memberships.
    var metricsKind: BridgeMetrics.MessageKind? {
        switch content {
        case .message(let msgtype, _, let details): details?.replaces != nil ? .edit : BridgeMetrics.MessageKind(msgtype)
        case .reaction: .reaction
        case .redaction: .retraction
        case .member, .powerLevels, .topic, .tombstone, .encrypted, .encryptionEnabled: nil
        }
    }
}
