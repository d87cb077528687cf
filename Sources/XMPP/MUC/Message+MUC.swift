import IsthmusCommon

/// MUC readings of a message.
extension Message {
    /// Whether this is a room's bounce of our groupchat message because the sender is not an occupant
    /// (XEP-0045 §7.4: `<not-acceptable/>`; also after the room dropped us, e.g. across a server restart).
    /// The signal to rejoin and resend.
    public var isNotJoinedBounce: Bool {
        type == .error && error?.condition == .notAcceptable
    }

    /// The room's bare JID and the sender's nick, for a message from an occupant JID `room@service/nick`.
    public var roomAndNick: (room: JID, nick: String)? {
        guard let from, let nick = from.resource else { return nil }
        return (from.bare, nick)
    }
}
