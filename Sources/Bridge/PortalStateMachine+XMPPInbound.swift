import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The MUC's traffic: messages to Matrix exactly once (or taken as our own reflections), delivery errors of our own
/// messages, and occupants coming, going, renaming and being kicked — each with the ghost that stands for it.
extension PortalStateMachine {
    /// A live MUC message. The component receives one copy per occupant it hosts: only the copy addressed to the
    /// bridge's own occupant is bridged; errors bounced to a puppet are failure reports for our own messages.
    mutating func xmppMessage(_ message: RoomMessage) -> [Action] {
        let bot = configuration.naming.botOccupant
        if let error = message.error {
            guard let to = message.to, to == bot || puppets.values.contains(where: { $0.occupant == to }),
                  let originID = message.originID ?? message.id.flatMap(OriginID.init) else { return [] }
            return [.lookUpOwnMessage(originID, error: error)]
        }
        guard message.to == nil || message.to == bot else { return [] }
        return bridgeRoomMessage(message)
    }

    /// One groupchat message (live or archived): our own reflection is a receipt; anything else goes to Matrix once
    /// (the message map is consulted first when the room assigned a stanza-id).
    mutating func bridgeRoomMessage(_ message: RoomMessage) -> [Action] {
        var message = message
        // XEP-0359 §6: a stanza-id is the room's only if the room announces them; otherwise an occupant may have
        // put it there (a forged one could suppress another message), so the message is keyed like in a room without.
        if roomFeatures?.stanzaIDs == false { message.stanzaID = nil }
        if isOurOccupant(nick: message.nick, realJID: message.realJID) {
            return [.recordReflection(originID: message.originID, stanzaID: message.stanzaID)]
        }
        guard message.body != nil else { return [] }
        if message.stanzaID != nil { return [.lookUpBridged(message)] }
        return deliverToMatrix(message)
    }

    /// Whether a message or presence from `nick` is one of ours (the bridge's occupant or a puppet).
    func isOurOccupant(nick: String, realJID: JID?) -> Bool {
        if let realJID, configuration.naming.isOurs(realJID) { return true }
        if nick == botNick { return true }
        // Joined or not: after a restart puppets are rejoining, and archived reflections carry their nicks.
        return puppets.values.contains { $0.nick == nick }
    }

    /// Sends a message that is not in the map yet, as its sender's ghost.
    mutating func deliverToMatrix(_ message: RoomMessage) -> [Action] {
        guard let body = message.body else { return [] }
        let key = message.stanzaID ?? Self.digestKey(message, body: body)
        guard let (ghost, setup) = planGhost(nick: message.nick, occupantID: message.occupantID, realJID: message.realJID,
                                             joinedNow: !message.fromArchive) else {
            return refused(message, key: key, reason: "no ghost id for the occupant \(message.nick)")
        }
        return [.sendToMatrix(MatrixDelivery(
            message: message, key: key, ghost: ghost, setup: setup, outgoing: MessageTranslation.toMatrix(body),
            txnID: configuration.naming.matrixTxnID(room: configuration.muc, stanzaID: key)))]
    }

    /// The dedupe key of a message from a room that assigns no stanza-id (a room without an archive): the sender as
    /// the room identifies it (real JID, XEP-0421 occupant id, else nick) and the id the sender gave the message (its
    /// XEP-0359 origin-id, else the stanza's `id`), so a copy of the same message gets the same key (and the same
    /// Matrix transaction id) while a different message with the same text from the same sender does not. Only a
    /// message with neither id falls back to its text. Pure.
    static func digestKey(_ message: RoomMessage, body: String) -> StanzaID {
        let sender = MessageSender.occupant(occupantIdentity(message)).description
        let material = if let id = message.originID?.rawValue ?? message.id {
            "\(sender)\u{0}id\u{0}\(id)"
        } else {
            "\(sender)\u{0}body\u{0}\(body)"
        }
        return StanzaID("noid:\(Digest.hex(Digest.sha256(Array(material.utf8)).prefix(12)))")!
    }

    /// The sender of a MUC message as well as the room identifies it.
    static func occupantIdentity(_ message: RoomMessage) -> MessageSender.OccupantIdentity {
        if let realJID = message.realJID { return .realJID(realJID.bare) }
        if let occupantID = message.occupantID { return .occupantID(occupantID) }
        return .nick(message.nick)
    }

    /// Before a message is sent again after the homeserver was unavailable: its earlier attempt may have been
    /// stored although the answer never came (the homeserver stopped while answering). A transaction id does not
    /// guard against that across a homeserver restart (Synapse keeps an appservice user's transaction ids in memory
    /// only), so the room's recent timeline is searched for the copy: an event from the same ghost with the same
    /// content that no other message of the bridge is mapped to (`mapped`: the events the message map or the inbox
    /// knows). Found by scripts/chaos (seed 11). Pure.
    static func earlierCopy(of delivery: MatrixDelivery, in timeline: [MatrixTimelineEntry], mapped: Set<EventID>) -> EventID? {
        timeline.last { entry in
            guard !mapped.contains(entry.eventID), let event = entry.event, event.sender == delivery.ghost,
                  case .message(let msgtype, let body) = event.content else { return false }
            return msgtype.rawValue == delivery.outgoing.kind.rawValue && body == delivery.outgoing.body
        }?.eventID
    }

    mutating func matrixDelivered(_ delivery: MatrixDelivery, eventID: EventID) -> [Action] {
        if let setup = delivery.setup { ghosts[setup.ghost] = setup.saved }
        let message = delivery.message
        return [
            .recordBridged(MessageMapping(room: configuration.room, eventID: eventID, stanzaID: message.stanzaID,
                                          originID: message.originID, direction: .xmppToMatrix,
                                          sender: .occupant(Self.occupantIdentity(message)), state: .delivered)),
            .log(LogEntry(level: .debug, message: "Bridged XMPP message",
                          metadata: ["xmpp.stanza.id": delivery.key.rawValue, "matrix.event.id": eventID.rawValue])),
        ]
    }

    mutating func matrixDeliveryFailed(_ delivery: MatrixDelivery, _ failure: MatrixFailure) -> [Action] {
        switch failure {
        case .unavailable(let reason):
            // The homeserver is down or overloaded: wait (this room's later events wait too, keeping order).
            let pause = min(Duration.seconds(1) * (1 << min(delivery.attempt, 16)), configuration.maxMatrixBackoff)
            var next = delivery
            next.attempt += 1
            return [.log(LogEntry(level: .warning, message: "Homeserver unavailable; retrying",
                                  metadata: ["xmpp.stanza.id": delivery.key.rawValue, "error": reason])),
                    .retrySendToMatrix(next, after: pause)]
        case .refused(let reason):
            return refused(delivery.message, key: delivery.key, reason: reason)
        }
    }

    /// Matrix refused a message for good: it is recorded as failed (so it is not retried) and its sender is told.
    private func refused(_ message: RoomMessage, key: StanzaID, reason: String) -> [Action] {
        var actions: [Action] = [.log(LogEntry(level: .error, message: "Could not bridge an XMPP message to Matrix",
                                               metadata: ["xmpp.stanza.id": key.rawValue, "error": reason]))]
        if let stanzaID = message.stanzaID {
            actions.append(.recordRefused(MessageMapping(room: configuration.room, eventID: nil, stanzaID: stanzaID, originID: nil,
                                                         direction: .xmppToMatrix, sender: .occupant(Self.occupantIdentity(message)),
                                                         state: .failed)))
        }
        if !message.fromArchive, botJoined, let occupant = configuration.muc.with(resource: message.nick) {
            actions.append(.sendPrivate(to: occupant, body: "Your message could not be delivered to Matrix: \(reason)"))
        }
        return actions
    }

    /// The MUC bounced one of our messages. `not-acceptable` means the puppet is no longer an occupant: rejoin and
    /// resend once. Anything else: the Matrix sender is told in the room.
    mutating func ownMessageRefused(_ originID: OriginID, mapping: MessageMapping?, error: StanzaErrorInfo) -> [Action] {
        guard let mapping, mapping.direction == .matrixToXMPP, mapping.state == .sending, let user = mapping.sender.matrixUser else {
            return []
        }
        let log = Action.log(LogEntry(level: .warning, message: "The MUC refused a bridged message",
                                      metadata: ["xmpp.origin.id": originID.rawValue, "xmpp.error": error.condition.rawValue]))
        if error.condition == .notAcceptable, let body = mapping.body, puppets[user]?.joined == true {
            puppets[user]?.joined = false
            return [log] + ensurePuppet(user, then: .send(XMPPDelivery(user: user, originID: originID, body: body,
                                                                       purpose: .afterRefusal(error))))
        }
        return [log] + failedToXMPP(user: user, originID: originID, reason: error.text.map { "\(error.condition): \($0)" } ?? error.condition.rawValue)
    }

    /// One of our messages will never reach the MUC: recorded, and its Matrix sender told in the room.
    func failedToXMPP(user: UserID, originID: OriginID, reason: String) -> [Action] {
        let name = displaynames[user] ?? user.localpart
        return [.markFailed(originID),
                .postNotice("⚠️ \(name)'s message could not be delivered to the XMPP room (\(reason)).", subject: "failed:\(originID.rawValue)")]
    }

    // MARK: Presences

    /// A MUC presence (copy addressed to the bridge's occupant): occupants join, leave, change nick, get kicked.
    mutating func xmppPresence(_ presence: RoomPresence) -> [Action] {
        if presence.error != nil { return [] }
        guard presence.to == nil || presence.to == configuration.naming.botOccupant else { return [] }
        if presence.statusCodes.contains(110) || presence.nick == botNick { return ownPresence(presence) }
        if isOurOccupant(nick: presence.nick, realJID: presence.realJID) { return puppetPresence(presence) }
        if presence.available {
            guard let (ghost, setup) = planGhost(nick: presence.nick, occupantID: presence.occupantID, realJID: presence.realJID,
                                                 joinedNow: true) else {
                return [.log(LogEntry(level: .error, message: "Could not set up a ghost", metadata: ["xmpp.nick": presence.nick]))]
            }
            _ = ghost
            return setup.map { [.prepareGhost($0)] } ?? []
        }
        if presence.statusCodes.contains(303), let newNick = presence.newNick { return renameOccupant(from: presence.nick, to: newNick) }
        return occupantLeft(presence)
    }

    /// The bridge's own occupant was removed (kick, ban, shutdown, error): record it; it rejoins unless kicked or banned.
    private mutating func ownPresence(_ presence: RoomPresence) -> [Action] {
        guard !presence.available else { return [] }
        if presence.statusCodes.contains(303), let newNick = presence.newNick {
            botNick = newNick
            return []
        }
        botJoined = false
        if presence.statusCodes.contains(307) || presence.statusCodes.contains(301) {
            let what = presence.statusCodes.contains(301) ? "banned" : "kicked"
            return [.log(LogEntry(level: .error, message: "The bridge was removed from the MUC", metadata: ["xmpp.status": what])),
                    .setStatus(.error, detail: "the bridge was \(what) from the XMPP room\(presence.reason.map { ": \($0)" } ?? "")")]
        }
        let codes = presence.statusCodes.sorted().map(String.init).joined(separator: ",")
        return [.log(LogEntry(level: .warning, message: "The bridge left the MUC; rejoining", metadata: ["xmpp.status": codes]))]
            + startActivation()
    }

    /// One of our puppets left the room without being asked (kicked, banned, removed after an error): it is no longer
    /// joined, so the next message from its Matrix user rejoins it (and reports a refusal to the user).
    private mutating func puppetPresence(_ presence: RoomPresence) -> [Action] {
        guard !presence.available, !presence.statusCodes.contains(303),
              let user = puppets.first(where: { $0.value.nick == presence.nick })?.key else { return [] }
        puppets[user]?.joined = false
        return [.log(LogEntry(level: .notice, message: "A Matrix user's occupant was removed from the MUC", metadata: [
            "matrix.user.id": user.rawValue, "xmpp.status": presence.statusCodes.sorted().map(String.init).joined(separator: ","),
        ]))]
    }

    /// XEP-0045 §7.6 nick change (303): the same ghost, a new per-room displayname.
    private mutating func renameOccupant(from old: String, to new: String) -> [Action] {
        guard var occupant = occupants.removeValue(forKey: old) else {
            guard let (_, setup) = planGhost(nick: new, occupantID: nil, realJID: nil, joinedNow: true) else { return [] }
            return setup.map { [.prepareGhost($0)] } ?? []
        }
        occupant.nick = new
        occupants[new] = occupant
        guard let ghost = occupant.ghost else { return [] }
        let renamed = RoomGhost(room: configuration.room, user: ghost, nick: new, occupantID: occupant.occupantID,
                                realJID: occupant.realJID, joined: true)
        ghosts[ghost] = renamed
        return [.renameGhost(renamed)]
    }

    /// An occupant left, was kicked (307) or banned (301): its ghost leaves, or the bot removes it to show why.
    private mutating func occupantLeft(_ presence: RoomPresence) -> [Action] {
        let occupant = occupants.removeValue(forKey: presence.nick)
        let identity = Self.ghostIdentity(muc: configuration.muc, nick: presence.nick,
                                          occupantID: presence.occupantID ?? occupant?.occupantID,
                                          realJID: presence.realJID ?? occupant?.realJID)
        guard let ghost = occupant?.ghost ?? configuration.ghostUserID(identity) else { return [] }
        let banned = presence.statusCodes.contains(301)
        let removal: GhostRemoval = banned || presence.statusCodes.contains(307)
            ? .kick(ban: banned, reason: "\(banned ? "Banned" : "Kicked") in the XMPP room" + (presence.reason.map { ": \($0)" } ?? ""))
            : .leave
        var left = ghosts[ghost]
        left?.joined = false
        if let left { ghosts[ghost] = left }
        return [.removeGhost(ghost, removal, saving: left)]
    }

    /// After a (re)join the occupant list is complete: ghosts still joined for occupants that are gone leave.
    mutating func reconcileGhosts() -> [Action] {
        let present = Set(occupants.values.compactMap(\.ghost))
        let stale = ghosts.values.filter { $0.joined && !present.contains($0.user) }.sorted { $0.user.rawValue < $1.user.rawValue }
        return stale.map { ghost in
            var left = ghost
            left.joined = false
            ghosts[ghost.user] = left
            return .removeGhost(ghost.user, .leave, saving: left)
        }
    }

    // MARK: Ghosts

    /// The identity a ghost is derived from: the real bare JID when visible (one ghost in every room), else the room
    /// plus its XEP-0421 occupant-id, else the room plus the nick.
    static func ghostIdentity(muc: JID, nick: String, occupantID: OccupantID?, realJID: JID?) -> String {
        if let realJID { return realJID.bare.description }
        if let occupantID { return "\(muc.bare)#occupant-id:\(occupantID.rawValue)" }
        return "\(muc.bare)#nick:\(nick)"
    }

    /// The ghost for the occupant `nick` and what it needs to be registered, joined and named after the nick in the
    /// Matrix room (nil setup: nothing; restarts cause no leave/join churn). Records the occupant when it is present.
    /// nil when no ghost id can be formed.
    mutating func planGhost(nick: String, occupantID: OccupantID?, realJID: JID?, joinedNow: Bool) -> (UserID, GhostSetup?)? {
        let known = occupants[nick]
        let identity = Self.ghostIdentity(muc: configuration.muc, nick: nick, occupantID: occupantID ?? known?.occupantID,
                                          realJID: realJID ?? known?.realJID ?? knownRealJID(occupantID: occupantID ?? known?.occupantID))
        guard let ghost = known?.ghost ?? configuration.ghostUserID(identity) else { return nil }
        if joinedNow || known != nil {
            occupants[nick] = Occupant(nick: nick, occupantID: occupantID ?? known?.occupantID, realJID: realJID ?? known?.realJID,
                                       ghost: ghost)
        }
        let stored = ghosts[ghost]
        if let stored, stored.joined, stored.nick == nick { return (ghost, nil) }
        let saved = RoomGhost(room: configuration.room, user: ghost, nick: nick, occupantID: occupantID ?? stored?.occupantID,
                              realJID: realJID ?? stored?.realJID, joined: true)
        return (ghost, GhostSetup(ghost: ghost, identity: identity, nick: nick, join: stored?.joined != true, saved: saved))
    }

    /// The real JID of the ghost already seen in this room with `occupantID`, if any. XEP-0421 §4: a room gives one
    /// real JID the same occupant id, so that ghost is the sender's. An archived message (catch-up after a restart,
    /// before any presence) carries the occupant id but no real JID; without this it would get a second ghost, and
    /// a message sent by the first ghost just before a crash would be sent again by the second — a transaction id
    /// counts per sender, so Matrix would keep both.
    func knownRealJID(occupantID: OccupantID?) -> JID? {
        guard let occupantID else { return nil }
        return ghosts.values.filter { $0.occupantID == occupantID && $0.realJID != nil }
            .sorted { $0.user.rawValue < $1.user.rawValue }.first?.realJID
    }

    mutating func ghostPrepared(_ setup: GhostSetup, error: String?) -> [Action] {
        if let error {
            return [.log(LogEntry(level: .error, message: "Could not set up a ghost", metadata: ["xmpp.nick": setup.nick, "error": error]))]
        }
        ghosts[setup.ghost] = setup.saved
        return [.log(LogEntry(level: .debug, message: "Ghost ready", metadata: ["matrix.user.id": setup.ghost.rawValue, "xmpp.nick": setup.nick]))]
    }
}
