import IsthmusCommon

/// MUC private messages (XEP-0045 §7.5) to the Matrix users' occupants: the portal knows who sent one — the same
/// occupant, identity and ghost as in the room — and hands it to the DMs (RICH.md §12).
extension PortalStateMachine {
    /// What the portal hands to ``DirectChats`` (performed by the ``Portal`` as is).
    enum DirectChatHandoff: Sendable, Equatable {
        /// A private message to a Matrix user's occupant goes to their DM with the sender's ghost.
        case inbound(DirectChatRules.Inbound)
        /// The MUC bounced one of our private messages (from a DM): the DM is told.
        case bounce(DirectChatMachine.Bounce)
    }

    /// A private message to one of our puppets (to Matrix, into the user's DM with the sender's ghost), or a bounce
    /// of one of ours (reported in the DM it came from).
    mutating func xmppPrivateMessage(_ message: RoomMessage) -> [Action] {
        if let error = message.error {
            guard let originID = message.originID else { return [] }
            return [.directChats(.bounce(DirectChatMachine.Bounce(originID: originID, nick: message.nick, error: error)))]
        }
        guard let to = message.to, let user = puppets.first(where: { $0.value.occupant == to })?.key else {
            return [.log(LogEntry(level: .debug, message: "A private message not to a Matrix user's occupant ignored",
                                  metadata: ["xmpp.nick": message.nick]))]
        }
        guard message.body != nil || message.references.refersToAnother, !message.nick.isEmpty, message.nick != botNick,
              !isOurOccupant(nick: message.nick, realJID: message.realJID) else { return [] }
        // The sender as the room knows it (its occupant follows nick changes and keeps its ghost).
        guard let (sent, identity, ghost) = xmppOccupants.privateSender(of: message) else {
            return [.log(LogEntry(level: .error, message: "Could not form a ghost for a private message", metadata: ["xmpp.nick": message.nick]))]
        }
        let file = message.references.refersToAnother ? nil : message.body.flatMap { Self.fileLink(body: $0, references: message.references) }
        return [.directChats(.inbound(DirectChatRules.Inbound(user: user, ghost: ghost, identity: identity, message: sent, file: file)))]
    }
}
