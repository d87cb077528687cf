import IsthmusCommon
import XMPP

/// Private messages inside a hosted room (XEP-0045 §7.5): to an XMPP occupant, passed on as the room would; to a
/// Matrix member, written by the sender's ghost in their private Matrix room; that member's answers there come back
/// from its nick.
extension GatewayRoomMachine {
    func privateMessage(_ message: Message, from: JID) -> [Action] {
        guard let occupant = occupants[from.bare], occupant.resources.contains(from), matrixRoom != nil, let nick = message.to?.resource else {
            return [.send(.message(errorReply(to: message, from: from, StanzaError(type: .modify, condition: .notAcceptable,
                                                                                   text: "Join the room first"))))]
        }
        guard let body = message.body, !body.isEmpty else { return [] }
        if let other = occupants.values.first(where: { $0.nick == nick }) {
            return other.resources.sorted { $0.description < $1.description }.map {
                .send(.message(Message(type: .chat, from: address.occupant(occupant.nick), to: $0, id: message.id, body: body,
                                       mucUser: MUCUser())))
            }
        }
        guard let user = memberNicks().first(where: { $0.value == nick })?.key else {
            return [.send(.message(errorReply(to: message, from: from, StanzaError(type: .cancel, condition: .itemNotFound,
                                                                                   text: "No one is called \(nick) in this room"))))]
        }
        return [.sendDirect(from: from, ghost: occupant.ghost, to: user, message: message)]
    }

    /// `user`'s message in its private room with `ghost`: to every resource of that occupant, from `user`'s nick.
    func matrixPrivate(from user: UserID, to ghost: UserID, body: String, event: EventID) -> [Action] {
        guard let occupant = occupants.values.first(where: { $0.ghost == ghost }) else { return [] }
        let nick = senderNick(user)
        return occupant.resources.sorted { $0.description < $1.description }.map {
            .send(.message(Message(type: .chat, from: address.occupant(nick), to: $0, id: StanzaAttributeID(event.rawValue), body: body,
                                   mucUser: MUCUser())))
        }
    }
}
