/// Text translation between XMPP bodies and Matrix messages. Pure.
///
/// Bodies are preserved byte for byte (unicode, newlines, surrounding spaces, `<`, `&`). The one convention both
/// sides share differently is the emote: XMPP `/me waves` ↔ Matrix `m.emote` "waves".
public enum MessageTranslation {
    /// The Matrix message for an XMPP body.
    public static func toMatrix(_ body: String) -> OutgoingMatrixMessage {
        if body.hasPrefix("/me ") {
            return OutgoingMatrixMessage(kind: .emote, body: String(body.dropFirst(4)))
        }
        return OutgoingMatrixMessage(kind: .text, body: body)
    }

    /// The XMPP body for a Matrix message (`msgtype` and plain `body`); nil for types not bridged yet (media etc.).
    /// Formatted messages go as their plain `body`; notices from other bots as plain messages.
    public static func toXMPP(msgtype: MessageType, body: String) -> String? {
        switch msgtype {
        case .emote: return "/me " + body
        case .text, .notice: return body
        default: return body.isEmpty ? nil : body
        }
    }

    /// A short human description of an error for notices.
    static func describe(_ error: any Error) -> String {
        String(String(describing: error).prefix(200))
    }
}
