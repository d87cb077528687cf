import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// Activation (first start, new link, reconnect, rejoin), the archive catch-up, resends, the self-check, and the
/// drain of the Matrix inbox.
extension PortalStateMachine {
    /// Brings the link up: the bot joins the Matrix room, the bridge's occupant joins the MUC, the archive fills the
    /// gap since the last stanza-id, Matrix members' puppets (re)join, unreceipted messages are resent if the archive
    /// shows they never arrived, and then the inbox is drained — in that order.
    mutating func startActivation() -> [Action] {
        agenda.removeAll()
        drain = nil
        activating = true
        return [.bot(.joinMatrix)]
    }

    /// Outcomes of performed actions.
    mutating func outcome(_ input: Input) -> [Action] {
        switch input {
        case .event:
            return []
        case .botJoinedMatrix(let error):
            if let error {
                return [.log(LogEntry(level: .error, message: "Bot could not join the Matrix room", metadata: ["error": "\(error)"])),
                        .setStatus(.error, detail: "the bridge bot cannot join the Matrix room: \(error)")]
            }
            let cleared = ghosts(.occupantListCleared)
            agenda = [.joinBotOccupant(attempt: 0)]
            return cleared + roles(.occupantListCleared)
        case .botJoinedMUC(let join, let result):
            return botJoinOutcome(join, result)
        case .botJoinFailed(_, let failure):
            return [.log(LogEntry(level: .error, message: "Could not join the MUC", metadata: ["error": "\(failure)"])),
                    .setStatus(.error, detail: "cannot join the XMPP room: \(failure)")]
        case .roomLoaded(let snapshot):
            return roomLoaded(snapshot)
        case .undeliveredLoaded(let pending):
            resendsWentOut = true
            agenda.insert(contentsOf: (pending ?? []).map(Step.resend), at: 0)
            return []
        case .selfPinged(let outcome):
            switch outcome {
            case .notJoined?, .nickChanged?: break   // XEP-0410 §4: not in the room under the nick the machine knows
            case .joined?, .inconclusive?, nil: return []
            }
            guard botJoined else { return [] }
            botJoined = false
            return [.log(LogEntry(level: .warning, message: "The bridge is no longer in the MUC; rejoining"))] + startActivation()
        case .puppets(let input):
            return puppets(input)
        case .ghosts(let input):
            return ghosts(input)
        case .matrixDelivery(let input):
            return matrixDelivery(input)
        case .xmppDelivery(let input):
            return xmppDelivery(input)
        case .catchUp(let input):
            return catchUp(input)
        case .ephemeral(let input):
            return ephemeral(input)
        case .roles(let input):
            return roles(input)
        case .roomState(let input):
            return roomState(input)
        case .invites(let input):
            return invites(input)
        }
    }

    /// One step of the agenda.
    mutating func run(_ step: Step) -> [Action] {
        switch step {
        case .joinBotOccupant(let attempt):
            let base = configuration.naming.botNick
            let nick = attempt == 0 ? base : "\(base) \(attempt + 1)"
            return [.bot(.joinMUC(BotJoin(nick: nick, occupant: configuration.naming.botOccupant, attempt: attempt)))]
        case .readRoomFeatures:
            return catchUp(.readFeatures)
        case .loadRoom:
            return [.loadRoom]
        case .bridgeRoomMessage(let message):
            return matrixDelivery(.message(message))
        case .syncPuppets:
            return puppets(.sync)
        case .ensurePuppet(let user, let followUp):
            return ensurePuppet(user, then: followUp)
        case .removeDepartedPuppets(let members):
            return puppets(.removeDeparted(members: members))
        case .loadUndelivered:
            return [.loadUndelivered]
        case .resend(let mapping):
            guard let user = mapping.sender.matrixUser, let originID = mapping.originID,
                  let stanza = OutgoingGroupchat(mapping: mapping) else { return [] }
            return [.log(LogEntry(level: .info, message: "Resending an unreceipted message", metadata: ["xmpp.origin.id": originID.rawValue]))]
                + ensurePuppet(user, then: .send(XMPPDelivery(user: user, originID: originID, stanza: stanza, purpose: .resend)))
        case .puppetsSynced:
            return roles(.puppetsSynced)
        case .finishActivation:
            return finishActivation()
        case .finishRetry:
            guard resendsWentOut else {
                inboxBlocked = true
                return [.schedule(.inboxRetry, at: now + configuration.inboxRetryDelay)]
            }
            inboxBlocked = false
            return startDrainFromStore(selfCheck: false)
        case .handleMatrixEvent(let queued):
            return matrixEvent(queued)
        case .finishDrain(let seq):
            highestSeq = max(highestSeq, seq)
            inboxNeedsReload = false
            let selfCheck = drain?.selfCheck ?? false
            drain = nil
            if selfCheck { agenda.insert(contentsOf: [.syncPuppets, .selfPing], at: 0) }
            return []
        case .selfPing:
            return [.bot(.selfPing(nick: botNick))]
        }
    }

    private mutating func botJoinOutcome(_ join: BotJoin, _ result: JoinOutcome) -> [Action] {
        let attempt = join.attempt
        switch result {
        case .joined(let presence):
            botNick = presence.nick
            botJoined = true
            agenda = [.readRoomFeatures, .loadRoom]
            return [.log(LogEntry(level: .info, message: "Joined the MUC",
                                  metadata: ["xmpp.nick": presence.nick, "xmpp.muc.created": "\(presence.createdRoom)"]))]
                + roles(.botJoined(created: presence.createdRoom, affiliation: presence.affiliation))
        case .nickConflict:
            guard attempt + 1 < 10 else {
                return [.setStatus(.error, detail: "every nick tried for the bridge is taken in the XMPP room")]
            }
            agenda = [.joinBotOccupant(attempt: attempt + 1)]
            return []
        case .notAllowed(let error):
            return [.log(LogEntry(level: .error, message: "The MUC refused the bridge", metadata: ["xmpp.error": error.condition.rawValue])),
                    .setStatus(.error, detail: "the XMPP room refused the bridge: \(error.condition)\(error.text.map { " (\($0))" } ?? "")")]
        }
    }

    /// The room's persisted state arrived: puppets and ghosts are known again; the archive fills the gap.
    private mutating func roomLoaded(_ snapshot: RoomSnapshot?) -> [Action] {
        agenda = [.syncPuppets, .loadUndelivered, .puppetsSynced, .finishActivation]
        guard let snapshot else { return [] }
        return puppets(.loaded(snapshot.puppets)) + ghosts(.loaded(snapshot.ghosts)) + roomState(.loaded(snapshot.texts, avatar: snapshot.avatar)) + catchUp(.roomLoaded(snapshot))
    }

    private mutating func finishActivation() -> [Action] {
        activating = false
        inboxNeedsReload = true
        let checkFirst = catchUp(.timelineCheckDue)   // the first drain checks the timeline
        if resendsWentOut {
            inboxBlocked = false
            return checkFirst + ghosts(.activated) + roomState(.activated) + [.setStatus(.active, detail: nil)]
                + startDrainFromStore(selfCheck: false)
        }
        inboxBlocked = true
        return checkFirst + ghosts(.activated) + [.schedule(.inboxRetry, at: now + configuration.inboxRetryDelay)]
            + roomState(.activated) + [.setStatus(.active, detail: nil)]
    }

    // MARK: Drains

    /// A drain from the store, taking a pending timeline check with it.
    mutating func startDrainFromStore(selfCheck: Bool) -> [Action] {
        drain = Drain(selfCheck: selfCheck)
        return catchUp(.drainFromStore)
    }

    /// A drain of events handed in as written.
    mutating func startDrain(_ queued: [QueuedMatrixEvent], selfCheck: Bool) -> [Action] {
        drain = Drain(selfCheck: selfCheck)
        agenda.insert(contentsOf: queued.map(Step.handleMatrixEvent) + [.finishDrain(highestSeq: queued.map(\.seq).max() ?? 0)], at: 0)
        return []
    }

    /// The XMPP side was unavailable during a drain: the rest waits in the store.
    mutating func drainBlocked(retry: Bool) -> [Action] {
        agenda.removeAll { step in
            switch step {
            case .handleMatrixEvent, .finishDrain: return true
            default: return false
            }
        }
        inboxBlocked = true
        inboxNeedsReload = true
        let selfCheck = drain?.selfCheck ?? false
        drain = nil
        if selfCheck { agenda.insert(.selfPing, at: 0) }
        return retry ? [.schedule(.inboxRetry, at: now + configuration.inboxRetryDelay)] : []
    }
}
