import IsthmusCommon
import XMPP

/// Typing and read markers in a hosted room, both ways and best effort: XEP-0085 chat states are the ghost's typing
/// notice, XEP-0333 `displayed` (naming a stanza-id, that is an event id) its read receipt; Matrix typing and read
/// receipts come back as the same, from the member's nick.
extension GatewayRoomMachine {
    /// What an occupant's chat state or marker asks of the Matrix room (a message's body ends its typing).
    mutating func signals(_ message: Message, ghost: UserID, room: RoomID) -> [Action] {
        let signals = message.signals
        var actions: [Action] = []
        let composing = signals.chatState == .composing
        if composing || (xmppTyping.contains(ghost) && (signals.chatState != nil || message.body != nil)) {
            if composing { xmppTyping.insert(ghost) } else { xmppTyping.remove(ghost) }
            actions.append(.typing(ghost: ghost, room: room, composing))
        }
        if let displayed = signals.displayed.flatMap(EventID.init) {
            actions.append(.readReceipt(ghost: ghost, room: room, event: displayed))
        }
        return actions
    }

    mutating func matrixEphemeral(_ ephemeral: MatrixEphemeral) -> [Action] {
        let ours = Set(occupants.values.map(\.ghost)).union(pendingGhosts).union([bot])
        let nicks = memberNicks()
        switch ephemeral {
        case .typing(let users):
            let now = users.subtracting(ours)
            let started = now.subtracting(typing), stopped = typing.subtracting(now)
            typing = now
            var actions: [Action] = []
            for (user, state) in started.map({ ($0, ChatState.composing) }) + stopped.map({ ($0, ChatState.active) }) {
                guard let nick = nicks[user] else { continue }
                actions += broadcast { .message(signal(ChatSignals(chatState: state), from: nick, to: $0)) }
            }
            return actions
        case .read(let receipts):
            var actions: [Action] = []
            for (user, event) in receipts.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where !ours.contains(user) {
                guard let nick = nicks[user] else { continue }
                actions += broadcast { .message(signal(ChatSignals(displayed: event.rawValue), from: nick, to: $0)) }
            }
            return actions
        }
    }

    private func signal(_ signals: ChatSignals, from nick: String, to resource: JID) -> Message {
        Message(type: .groupchat, from: address.occupant(nick), to: resource, extensions: signals.elements)
    }
}
