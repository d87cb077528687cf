import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The agenda (the remaining steps of the piece of work in progress) and the drain of the Matrix inbox: events handed
/// in as written or read from the store, a drain paused, blocked or retried, the self-check's drain.
extension PortalStateMachine {
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
            if let run = plainRun(startingWith: queued) { return xmppDelivery(.plainRun(run)) }
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

    /// Matrix events as written to the inbox: drained at once when nothing is ahead of them, else read from the store.
    mutating func handedIn(_ queued: [QueuedMatrixEvent]) -> [Action] {
        let fresh = queued.filter { $0.seq > highestSeq }
        guard !fresh.isEmpty else { return [] }
        guard canSend else {
            inboxNeedsReload = true
            return []
        }
        if inboxNeedsReload || catchUp.timelineCheckPending { return startDrainFromStore(selfCheck: false) }
        highestSeq = max(highestSeq, fresh.map(\.seq).max() ?? 0)
        return startDrain(fresh, selfCheck: false)
    }

    /// A receipt wait ended: the drain it held goes on.
    mutating func resumeDrain() -> [Action] {
        guard xmppDelivery.receiptWait != nil, canSend, drain == nil else { return [] }
        return startDrainFromStore(selfCheck: false)
    }

    /// The paused inbox's retry: the resends first, then the drain (or another wait).
    mutating func retryInbox() -> [Action] {
        guard xmppConnected, botJoined, inboxBlocked, !activating else { return [] }
        agenda = [.loadUndelivered, .finishRetry]
        return []
    }

    mutating func checkTimeline() -> [Action] {
        catchUp(.timelineCheckDue) + (canSend ? startDrainFromStore(selfCheck: false) : [])
    }

    /// The periodic self-check: a drain with a timeline check, then the puppet sync and the self-ping. While the inbox
    /// waits for its retry, the retry happens now instead: messages mapped and not out yet (a timed-out send, the rest
    /// of its run) are resent first, so nothing newer overtakes them.
    mutating func selfCheck() -> [Action] {
        guard xmppConnected, botJoined, !activating else { return [] }
        if inboxBlocked { return catchUp(.timelineCheckDue) + retryInbox() }
        inboxBlocked = false
        return catchUp(.timelineCheckDue) + startDrainFromStore(selfCheck: true)
    }

    /// Our messages still unreceipted: each is resent (if the archive shows it never arrived) before anything newer.
    mutating func undeliveredLoaded(_ pending: [MessageMapping]?) -> [Action] {
        resendsWentOut = true
        agenda.insert(contentsOf: (pending ?? []).map(Step.resend), at: 0)
        return []
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

    /// The most messages one run maps in one commit (``XMPPDeliveryMachine/Input/plainRun(_:)``).
    static let longestPlainRun = 64

    /// `queued` and the events behind it on the agenda, while they are plain messages (``XMPPDeliveryMachine/isPlain(_:)``)
    /// from Matrix users whose puppets are ready — in the MUC under their current names, nothing to rename first
    /// (``PuppetMachine/isReady(_:)``) — taken off the agenda; nil when fewer than two are (the event goes alone).
    /// Such messages change nothing another one's translation reads (nicks, names), so translating them together gives
    /// what one at a time would. Not in client mode, where the relay occupant speaks for everyone.
    private mutating func plainRun(startingWith queued: QueuedMatrixEvent) -> [QueuedMatrixEvent]? {
        func plain(_ queued: QueuedMatrixEvent) -> Bool {
            XMPPDeliveryMachine.isPlain(queued.event) && isBridgedMatrixUser(queued.event.sender)
                && matrixMembers.isReady(queued.event.sender)
        }
        guard configuration.relay == nil, plain(queued), case .handleMatrixEvent(let next)? = agenda.first, plain(next) else { return nil }
        var run = [queued]
        while run.count < Self.longestPlainRun, case .handleMatrixEvent(let next)? = agenda.first, plain(next) {
            run.append(next)
            agenda.removeFirst()
        }
        return run
    }

    /// The XMPP side was unavailable during a drain: the rest waits in the store — and the sends of a run's messages
    /// that are mapped but not out yet wait in the map, as `sending`, for the resends of the inbox's retry (after a
    /// timeout) or of the activation that follows the reconnect.
    mutating func drainBlocked(retry: Bool) -> [Action] {
        agenda.removeAll { step in
            switch step {
            case .handleMatrixEvent, .finishDrain: return true
            case .ensurePuppet(_, .send(let delivery)): if case .inbox = delivery.purpose { return true } else { return false }
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
