import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// MUC messages to Matrix, exactly once: our own reflections are receipts; anything else is resolved against the
/// message map first (RICH.md A1: which id each XEP names), translated, sent as its sender's ghost with a txnId derived
/// from the stanza's key, and recorded (map entry, reaction changes, resume point) in one commit; the homeserver's
/// pauses are waited out, its refusals recorded so they are not retried. A sub-machine of ``PortalStateMachine``
/// with no state of its own: it reads the room through the ``Room`` view handed in with each input, its actions reach
/// the ``Portal`` wrapped in ``PortalStateMachine/Action/matrixDelivery(_:)``, and what the room model learns (a ghost's saved
/// state, an occupant) comes back as requests (``Request``) the router applies.
struct MatrixDeliveryMachine: Sendable {
    typealias MatrixDelivery = PortalStateMachine.MatrixDelivery
    typealias MatrixFailure = PortalStateMachine.MatrixFailure
    typealias LogEntry = PortalStateMachine.LogEntry
    typealias XMPPTargets = PortalStateMachine.XMPPTargets
    typealias MatrixSend = PortalStateMachine.MatrixSend

    let configuration: Configuration

    struct Configuration: Sendable {
        var room: RoomID
        var muc: JID
        var naming: BridgeNaming
        var botUserID: UserID
        /// The pauses between attempts while the homeserver is unavailable.
        var matrixBackoff: Backoff
        /// Matrix client mode: messages go from the bridge's account, naming their occupant (``MatrixRelayFormat``).
        var relay: MatrixRelayFormat? = nil
    }

    enum Input: Sendable, Equatable {
        /// A groupchat message of the room (live or archived, addressed to the bridge's occupant).
        case message(RoomMessage)
        /// Whether the message map has the message's key (nil when the lookup failed), and what it refers to.
        case lookedUp(RoomMessage, bridged: Bool?, targets: XMPPTargets = XMPPTargets())
        /// Every send of the delivery went out: their event ids (nil: a reaction that was there already).
        case delivered(MatrixDelivery, eventIDs: [EventID?])
        /// A send failed (`ghostReady`: after the delivery's ghost setup was made and saved).
        case failed(MatrixDelivery, MatrixFailure, ghostReady: Bool = false)
        /// The homeserver refused the ghost's event: it is not in the room, although held for joined.
        case ghostNotInRoom(MatrixDelivery, reason: String)
    }

    /// What the portal must do, in order; "→" marks the actions whose outcome (an ``Input``) the machine waits for.
    indirect enum Action: Sendable, Equatable {
        /// → ``Input/lookedUp(_:bridged:targets:)``: whether the message map has this message, and the mapped messages
        /// it refers to (reply, correction, retraction, reactions, moderation).
        case lookUpBridged(RoomMessage)
        /// → ``Input/delivered(_:eventIDs:)``, ``Input/failed(_:_:ghostReady:)`` or ``Input/ghostNotInRoom(_:reason:)``:
        /// prepare the ghost if needed, then send the message as it (idempotent: the txnId is derived from the key).
        case send(MatrixDelivery)
        /// The same after a pause (the homeserver was unavailable); no outcome when the portal is shutting down.
        case retry(MatrixDelivery, after: Duration)
        /// A reflection of one of ours (the receipt, when its origin-id is mapped) or at least the room's new resume point.
        case recordReflection(originID: OriginID?, stanzaID: StanzaID?)
        /// The message is bridged (map entry, reaction changes and resume point in one commit).
        case recordBridged(MessageMapping, reactions: ReactionChange = ReactionChange())
        /// The message was refused for good or refers to nothing bridged (recorded so it is not retried).
        case recordRefused(MessageMapping)
        /// A private message from the bridge's occupant tells the XMPP sender their message did not reach Matrix.
        case tellSender(to: JID, body: String)
        case log(LogEntry)

        /// Whether the machine waits for this action's outcome.
        var awaitsOutcome: Bool {
            switch self {
            case .lookUpBridged, .send, .retry: true
            case .recordReflection, .recordBridged, .recordRefused, .tellSender, .log: false
            }
        }
    }

    /// What the machine returns, in order: actions for the ``Portal``, and what the room model must take in.
    typealias Output = SubMachineOutput<Action, Request>

    enum Request: Sendable, Equatable {
        /// One of our own messages came back from the room (its receipt is recorded): a drain that waits for it goes on.
        case reflected(OriginID?)
        /// The sender, as the room now identifies it, is an occupant with this ghost.
        case occupantSeen(PortalStateMachine.Occupant)
        /// A ghost's setup was made: its state as saved.
        case ghostSaved(RoomGhost)
        /// A ghost held for joined is not in the Matrix room.
        case ghostOut(UserID)
    }

    /// The ghost that stands for a sender, what it still needs before it can speak, and the occupant to record.
    struct GhostPlan: Sendable, Equatable {
        var ghost: UserID
        var setup: PortalStateMachine.GhostSetup?
        /// The occupant as the room model should now know it (nil: not recorded, e.g. an archived message's sender).
        var occupant: PortalStateMachine.Occupant?
    }

    /// What the machine may read of the room's model (kept by the portal machine), handed in with each input.
    struct Room {
        /// Whether the room's stanza-ids are the room's own (false when its disco#info does not announce them).
        var trustsStanzaIDs: Bool
        /// The bridge's occupant's nick in the MUC.
        var botNick: String
        /// The Matrix users' occupants in the MUC (joined or not).
        var puppets: [UserID: Puppet]
        /// The sender's ghost (`joinedNow`: a live message, whose sender is in the room). `rejoining`: plan as if this
        /// ghost, with this saved state when known, had left the Matrix room.
        var ghostPlan: (_ message: RoomMessage, _ joinedNow: Bool, _ rejoining: (UserID, RoomGhost?)?) -> GhostPlan?
        /// Whether the bridge's occupant is in the MUC (to tell a sender their message failed).
        var botJoined: Bool

        /// The Matrix users' occupants by nick (who an XMPP message can mention).
        func puppetNicks() -> [String: UserID] {
            Dictionary(puppets.values.map { ($0.nick, $0.user) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// Takes one input; returns what to do, in order (an awaited action ends the batch).
    func receive(_ input: Input, in room: Room) -> [Output] {
        switch input {
        case .message(let message):
            return bridge(message, in: room)
        case .lookedUp(let message, let bridged, let targets):
            guard bridged == false else { return [] }
            return deliver(message, targets: targets, in: room)
        case .delivered(let delivery, let eventIDs):
            let (record, reactions) = PortalStateMachine.recorded(delivery.record, delivery.reactions, sends: delivery.sends, eventIDs: eventIDs)
            return (delivery.setup.map { [.portal(.ghostSaved($0.saved))] } ?? []) + [
                .perform(.recordBridged(record, reactions: reactions)),
                .perform(.log(LogEntry(level: .debug, message: "Bridged XMPP message", metadata: [
                    "xmpp.stanza.id": delivery.key.rawValue, "matrix.event.id": record.eventID?.rawValue ?? "-", "kind": record.kind.rawValue,
                ]))),
            ]
        case .failed(let delivery, let failure, let ghostReady):
            return failed(delivery, failure, ghostReady: ghostReady, in: room)
        case .ghostNotInRoom(let delivery, let reason):
            return ghostNotInRoom(delivery, reason: reason, in: room)
        }
    }

    /// One groupchat message (live or archived): our own reflection is a receipt; anything else goes to Matrix once
    /// (the message map is consulted first when the room assigned a stanza-id or the message refers to another).
    private func bridge(_ message: RoomMessage, in room: Room) -> [Output] {
        var message = message
        // XEP-0359 §6: a stanza-id is the room's only if the room announces them; otherwise an occupant may have
        // put it there (a forged one could suppress another message), so the message is keyed like in a room without.
        if !room.trustsStanzaIDs { message.stanzaID = nil }
        if message.nick.isEmpty {
            // From the room itself: only a XEP-0425 moderation announcement concerns us (trusted from the room only).
            guard message.references.moderation != nil else { return [] }
            return [.perform(.lookUpBridged(message))]
        }
        message.references.moderation = nil
        if PortalStateMachine.isOurOccupant(nick: message.nick, realJID: message.realJID, naming: configuration.naming,
                                            botNick: room.botNick, puppets: room.puppets) {
            return [.perform(.recordReflection(originID: message.originID, stanzaID: message.stanzaID)), .portal(.reflected(message.originID))]
        }
        let refers = message.references.refersToAnother   // (moderation cleared above: only the room may announce one)
        guard message.body != nil || refers else { return [] }
        if message.stanzaID != nil || refers { return [.perform(.lookUpBridged(message))] }
        return deliver(message, targets: XMPPTargets(), in: room)
    }

    /// The stanza-id under which ``bridge(_:in:)`` would look `message` up as a plain message — from another occupant,
    /// with a body, the room's stanza-id and no reference to another message — or nil. The portal reads a burst's at
    /// once (`Portal.lookAhead`); reflections of ours and messages that refer to others are left out. Pure.
    func plainLookUpKey(_ message: RoomMessage, in room: Room) -> StanzaID? {
        guard room.trustsStanzaIDs, !message.nick.isEmpty, message.body != nil, !message.references.refersToAnother,
              !PortalStateMachine.isOurOccupant(nick: message.nick, realJID: message.realJID, naming: configuration.naming,
                                                botNick: room.botNick, puppets: room.puppets) else { return nil }
        return message.stanzaID
    }

    /// `ghostReady`: the delivery's ghost setup was made (and saved) before the failure: the model takes it in, and a
    /// retry does not make it again.
    private func failed(_ delivery: MatrixDelivery, _ failure: MatrixFailure, ghostReady: Bool, in room: Room) -> [Output] {
        var delivery = delivery
        var outputs: [Output] = []
        if ghostReady, let setup = delivery.setup {
            outputs.append(.portal(.ghostSaved(setup.saved)))
            delivery.setup = nil
        }
        switch failure {
        case .unavailable(let reason):
            // The homeserver is down or overloaded: wait (this room's later events wait too, keeping order).
            let pause = configuration.matrixBackoff.pause(after: delivery.attempt)
            var next = delivery
            next.attempt += 1
            return outputs + [.perform(.log(LogEntry(level: .warning, message: "Homeserver unavailable; retrying",
                                                     metadata: ["xmpp.stanza.id": delivery.key.rawValue, "error": reason]))),
                              .perform(.retry(next, after: pause))]
        case .refused(let reason):
            return outputs + refused(delivery.message, key: delivery.key, reason: reason, tellSender: delivery.record.kind == .message, in: room)
        }
    }

    /// A ghost held for joined is not in the room (found by scripts/chaos, seed 2026: it was made to leave just before
    /// a crash, and the store still said joined): it joins again (invited first where needed) and the delivery goes
    /// once more. A ghost refused right after it joined (banned, or it may not speak) keeps the refusal.
    private func ghostNotInRoom(_ delivery: MatrixDelivery, reason: String, in room: Room) -> [Output] {
        let message = delivery.message
        let tellSender = delivery.record.kind == .message
        // The refusal came from the send, so the setup before it was made (and saved): the model takes it in.
        let saved: [Output] = delivery.setup.map { [.portal(.ghostSaved($0.saved))] } ?? []
        guard !delivery.rejoinIsFinal else {
            return saved + refused(message, key: delivery.key, reason: reason, tellSender: tellSender, in: room)
        }
        let plan = room.ghostPlan(message, false, (delivery.ghost, delivery.setup?.saved))
        let known: [Output] = plan?.occupant.map { [.portal(.occupantSeen($0))] } ?? []
        guard let plan, plan.ghost == delivery.ghost, let setup = plan.setup else {
            return saved + [.portal(.ghostOut(delivery.ghost))] + known
                + refused(message, key: delivery.key, reason: reason, tellSender: tellSender, in: room)
        }
        var next = delivery
        next.rejoined = true
        next.setup = setup
        return saved + [.portal(.ghostOut(delivery.ghost))] + known + [
            .perform(.log(LogEntry(level: .notice, message: "A ghost was not in the room; joining it and sending again",
                                   metadata: ["matrix.user.id": plan.ghost.rawValue, "xmpp.stanza.id": delivery.key.rawValue]))),
            .perform(.send(next)),
        ]
    }

    /// Matrix refused a message for good: it is recorded as failed (so it is not retried) and its sender is told.
    func refused(_ message: RoomMessage, key: StanzaID, reason: String, tellSender: Bool = true, in room: Room) -> [Output] {
        var outputs: [Output] = [.perform(.log(LogEntry(level: .error, message: "Could not bridge an XMPP message to Matrix",
                                                        metadata: ["xmpp.stanza.id": key.rawValue, "error": reason])))]
        if let stanzaID = message.stanzaID {
            outputs.append(.perform(.recordRefused(MessageMapping(
                room: configuration.room, eventID: nil, stanzaID: stanzaID, originID: nil, direction: .xmppToMatrix,
                sender: .occupant(PortalStateMachine.occupantIdentity(message)), state: .failed))))
        }
        if tellSender, !message.fromArchive, room.botJoined, !message.nick.isEmpty, let occupant = configuration.muc.with(resource: message.nick) {
            outputs.append(.perform(.tellSender(to: occupant, body: "Your message could not be delivered to Matrix: \(reason)")))
        }
        return outputs
    }

    /// The Matrix txnId of a delivery's send: from the stanza's key (and, for one of several sends, what it is for).
    func txnID(_ key: StanzaID, _ part: String? = nil) -> ClientTransactionID {
        let id = part.flatMap { StanzaID(key.rawValue + "\u{0}" + $0) } ?? key
        return configuration.naming.matrixTxnID(room: configuration.muc, stanzaID: id)
    }
}
