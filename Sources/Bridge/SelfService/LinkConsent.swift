import IsthmusCommon

/// One self-service link request in flight: owns a ``LinkConsentMachine``, feeds it the MUC's events (routed here by
/// the ``PortalDirectory`` while the desk holds the MUC) and timer ticks, and performs its actions — XMPP through the
/// bridge's own occupant, Matrix and the link itself through the desk's closures. ``run()`` returns when the machine
/// is finished and every action is done (the bridge's occupant has left the MUC). Runs on its own actor.
actor LinkConsent {
    /// What the consent needs from the desk.
    struct Effects: Sendable {
        /// Posts an `m.notice` in the requesting room.
        var notice: @Sendable (String) async -> Void
        /// Checks the requester's power again and records the link; nil when linked, else why not.
        var link: @Sendable (LinkConsentMachine.Request) async -> String?
    }

    enum Input: Sendable {
        case xmpp(XMPPLinkEvent)
        case timer
    }

    private var machine: LinkConsentMachine
    private let xmpp: any XMPPLink
    private let naming: BridgeNaming
    private let clock: TimeSource
    private let effects: Effects
    private let logger: Logger
    private let inputs: AsyncStream<Input>
    private let continuation: AsyncStream<Input>.Continuation
    /// The nick the room gave the bridge's occupant (it may rewrite the requested one).
    private var ownNick: String

    init(machine: LinkConsentMachine, xmpp: any XMPPLink, naming: BridgeNaming, clock: TimeSource, effects: Effects, logger: Logger) {
        self.machine = machine
        self.xmpp = xmpp
        self.naming = naming
        self.clock = clock
        self.effects = effects
        self.logger = logger
        ownNick = naming.botNick
        (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
    }

    /// Hands over an event of the MUC; safe from any context (the XMPP task calls it).
    nonisolated func deliver(_ event: XMPPLinkEvent) {
        continuation.yield(.xmpp(event))
    }

    /// Runs the handshake to its end.
    func run() async {
        await withTaskGroup(of: Void.self) { timers in
            await perform(machine.start(), timers: &timers)
            for await input in inputs {
                let actions: [LinkConsentMachine.Action]
                switch input {
                case .timer:
                    actions = machine.timeElapsed(now: clock.now())
                case .xmpp(let event):
                    actions = receive(event)
                }
                await perform(actions, timers: &timers)
                if machine.isFinished { break }
            }
            timers.cancelAll()
        }
        continuation.finish()
    }

    private func receive(_ event: XMPPLinkEvent) -> [LinkConsentMachine.Action] {
        let bot = naming.botOccupant
        switch event {
        case .presence(let presence):
            guard presence.to == nil || presence.to == bot, presence.error == nil, presence.nick != ownNick,
                  !presence.nick.isEmpty,   // the room's own presence (its avatar hash) is no occupant
                  !presence.statusCodes.contains(.selfPresence) else { return [] }
            let occupant = LinkConsentMachine.Occupant(nick: presence.nick, affiliation: presence.affiliation,
                                                       occupantID: presence.occupantID, realJID: presence.realJID)
            return machine.presence(occupant, available: presence.available,
                                    newNick: presence.statusCodes.contains(.nickChanged) ? presence.newNick : nil, now: clock.now())
        case .privateMessage(let message):
            guard message.to == nil || message.to == bot, let body = message.body else { return [] }
            let sender = LinkConsentMachine.Occupant(nick: message.nick, affiliation: nil, occupantID: message.occupantID,
                                                     realJID: message.realJID)
            let actions = machine.privateMessage(from: sender, body: body, now: clock.now())
            if actions.isEmpty {
                logger.debug("Private message ignored: not the asked occupant's answer", metadata: ["xmpp.muc": message.room.description])
            }
            return actions
        case .message(let message):
            // Only bounces matter here (groupchat traffic waits for the portal).
            guard let error = message.error else { return [] }
            return machine.privateMessageBounced(to: message.nick, reason: error.text ?? error.condition.rawValue)
        case .disconnected:
            return machine.connectionLost()
        case .connected, .invite, .session, .subscriptionRequest, .gateway:
            return []
        }
    }

    /// Performs `actions` in order, with the machine's answers to the outcomes appended as they come.
    private func perform(_ actions: [LinkConsentMachine.Action], timers: inout TaskGroup<Void>) async {
        var queue = actions[...]
        while let action = queue.popFirst() {
            queue.append(contentsOf: await perform(action, timers: &timers))
        }
    }

    private func perform(_ action: LinkConsentMachine.Action, timers: inout TaskGroup<Void>) async -> [LinkConsentMachine.Action] {
        let muc = machine.request.muc
        switch action {
        case .joinMUC(let room):
            do {
                switch try await xmpp.join(room: room, nick: naming.botNick, occupant: naming.botOccupant) {
                case .joined(let presence):
                    ownNick = presence.nick
                    return machine.joined(now: clock.now())
                case .nickConflict:
                    return machine.joinFailed("its nick \(naming.botNick) is taken there")
                case .notAllowed(let error):
                    return machine.joinFailed(error.text ?? error.condition.rawValue)
                }
            } catch {
                return machine.joinFailed("the XMPP server did not answer (\(error))")
            }
        case .sendPrivate(let nick, let body):
            guard let recipient = muc.bare.with(resource: nick) else { return [] }
            do {
                try await xmpp.sendPrivate(from: naming.botOccupant, to: recipient, body: body)
            } catch {
                logger.warning("Could not send a private message in the MUC", metadata: ["xmpp.muc": muc.description, "error": "\(error)"])
            }
        case .sendGroupchat(let body):
            do {
                try await xmpp.sendGroupchat(room: muc, from: naming.botOccupant, body: body, references: MessageReferences(),
                                             originID: OriginID("isthmus-consent-\(UInt64.random(in: 0...UInt64.max))")!)
            } catch {
                logger.warning("Could not announce the link in the MUC", metadata: ["xmpp.muc": muc.description, "error": "\(error)"])
            }
        case .scheduleTimeout(let instant):
            let (continuation, delay) = (self.continuation, instant - clock.now())
            timers.addTask {
                guard (try? await Task.sleep(for: delay)) != nil else { return }
                continuation.yield(.timer)
            }
        case .leaveMUC(let room):
            do {
                try await xmpp.leave(room: room, nick: ownNick, occupant: naming.botOccupant, status: nil)
            } catch {
                logger.info("Could not leave the MUC after a link request", metadata: ["xmpp.muc": room.description, "error": "\(error)"])
            }
        case .link(let request):
            return machine.linked(error: await effects.link(request))
        case .noticeMatrix(let text):
            await effects.notice(text)
        }
        return []
    }
}
