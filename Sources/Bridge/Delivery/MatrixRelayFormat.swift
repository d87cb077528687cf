import IsthmusCommon
import MessageFormatting

/// How an XMPP occupant's message reads in the Matrix room when the bridge's one Matrix account relays it (Matrix
/// client mode, issue 28): an MSC4144 per-message profile naming the occupant — clients that know it show the nick as
/// the sender — and, for the others, `relay.matrix_format` as the body (`{nick}` the occupant's nick, `{text}` the
/// message) and `<strong data-mx-profile-fallback>{nick}: </strong>` before the HTML, which profile-aware clients leave
/// out. Never a JID in a body. Pure.
public struct MatrixRelayFormat: Sendable, Equatable {
    public static let defaultFormat = "{nick}: {text}"

    /// The body template; must hold `{text}`.
    public var format: String

    public init(format: String = MatrixRelayFormat.defaultFormat) {
        self.format = format
    }

    /// `message` as the account sends it for the occupant `nick`, whose stable id is `id`: an emote keeps its body
    /// (clients write `* nick …` from the profile; the fallback names the nick in front), anything else follows
    /// ``format``. An edit's `m.new_content` gets the same treatment.
    public func relaying(_ message: OutgoingMatrixMessage, nick: String, id: String) -> OutgoingMatrixMessage {
        var relayed = message
        (relayed.body, relayed.html) = fallback(kind: message.kind, body: message.body, html: message.html, nick: nick)
        if var replacement = message.replacement {
            (replacement.body, replacement.html) = fallback(kind: message.kind, body: replacement.body, html: replacement.html, nick: nick)
            relayed.replacement = replacement
            // The top-level body of an edit is `* ` + the new text (for clients without edits).
            relayed.body = "* " + replacement.body
            relayed.html = replacement.html.map { "* " + $0 }
        }
        relayed.profile = PerMessageProfile(id: id, displayname: nick, hasFallback: true)
        return relayed
    }

    private func fallback(kind: OutgoingMatrixMessage.Kind, body: String, html: String?, nick: String) -> (String, String) {
        let escapedNick = HTMLEscaping.escape(nick)
        let htmlText = html ?? HTMLEscaping.escapedLines(body)
        if kind == .emote {
            return ("\(nick) \(body)", "<strong data-mx-profile-fallback>\(escapedNick) </strong>\(htmlText)")
        }
        return (RelayFormat.fill(format, name: nick, text: body, namePlaceholder: "{nick}"),
                "<strong data-mx-profile-fallback>\(escapedNick): </strong>\(htmlText)")
    }
}
