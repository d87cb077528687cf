import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The MUC's traffic: messages to Matrix exactly once (or taken as our own reflections), delivery errors of our own
/// messages, and presences: our own occupants', and the others' for the ghost machine.
extension PortalStateMachine {
    /// A live MUC message. The component receives one copy per occupant it hosts: only the copy addressed to the
    /// bridge's own occupant is bridged; errors bounced to a puppet are failure reports for our own messages.
    mutating func xmppMessage(_ message: RoomMessage) -> [Action] {
        let bot = configuration.naming.botOccupant
        if let error = message.error {
            if roomState.awaitsAnswer(to: message.id) { return roomState(.subjectRefused(error)) }
            guard let to = message.to, to == bot || puppets.values.contains(where: { $0.occupant == to }),
                  let originID = message.originID ?? message.id?.originID else { return [] }
            let told = invites(.refused(originID, error))
            if !told.isEmpty { return told }
            return xmppDelivery(.bounced(originID, error))
        }
        guard message.to == nil || message.to == bot else { return [] }
        let typing = ephemeral(.occupantTyping(message))
        // XEP-0045 §8.1: a subject without a body is a subject change (or the subject sent on join).
        if let subject = message.subject, message.body == nil { return typing + roomState(.subject(message, text: subject)) }
        // XEP-0045 §10.2: status 104 from the room itself — its configuration (and maybe its name) changed.
        if message.nick.isEmpty, message.statusCodes.contains(.configurationChanged) { return typing + configurationChanged() }
        // Only a chat state or marker (our puppets' own come back from the room too): nothing for the message path.
        if message.isSignalOnly { return typing + ephemeral(.occupantDisplayed(message)) }
        return typing + matrixDelivery(.message(message))
    }

    // MARK: Presences

    /// A MUC presence (copy addressed to the bridge's occupant): occupants join, leave, change nick, get kicked.
    mutating func xmppPresence(_ presence: RoomPresence) -> [Action] {
        if presence.error != nil { return [] }
        guard presence.to == nil || presence.to == configuration.naming.botOccupant else { return [] }
        if presence.nick.isEmpty { return roomState(.roomPresence(presence.avatar)) }   // the room's own presence
        if let destruction = presence.destroyed, presence.statusCodes.contains(.selfPresence) || presence.nick == botNick {
            return roomState(.destroyed(destruction))
        }
        if presence.statusCodes.contains(.selfPresence) || presence.nick == botNick { return ownPresence(presence) }
        if isOurOccupant(nick: presence.nick, realJID: presence.realJID) { return puppets(.occupantLeft(presence)) }
        // A puppet's nick change (303): the machine already holds the new nick, so the old one is not recognised —
        // the new one is. Without this the old nick's departure would look like an XMPP occupant renaming and get a ghost.
        if presence.statusCodes.contains(.nickChanged), let newNick = presence.newNick, isOurOccupant(nick: newNick, realJID: nil) { return [] }
        if presence.available { return ghosts(.occupantPresent(presence)) }
        if presence.statusCodes.contains(.nickChanged), let newNick = presence.newNick { return ghosts(.occupantRenamed(from: presence.nick, to: newNick)) }
        return ghosts(.occupantLeft(presence))
    }

    /// The bridge's own occupant was removed (kick, ban, shutdown, error): record it; it rejoins unless kicked or banned.
    private mutating func ownPresence(_ presence: RoomPresence) -> [Action] {
        guard !presence.available else { return [] }
        if presence.statusCodes.contains(.nickChanged), let newNick = presence.newNick {
            botNick = newNick
            return []
        }
        botJoined = false
        if presence.statusCodes.contains(.kicked) || presence.statusCodes.contains(.banned) {
            let what = presence.statusCodes.contains(.banned) ? "banned" : "kicked"
            return [.log(LogEntry(level: .error, message: "The bridge was removed from the MUC", metadata: ["xmpp.status": what])),
                    .setStatus(.error, detail: "the bridge was \(what) from the XMPP room\(presence.reason.map { ": \($0)" } ?? "")")]
        }
        let codes = presence.statusCodes.sorted().map(\.description).joined(separator: ",")
        return [.log(LogEntry(level: .warning, message: "The bridge left the MUC; rejoining", metadata: ["xmpp.status": codes]))]
            + startActivation()
    }
}
