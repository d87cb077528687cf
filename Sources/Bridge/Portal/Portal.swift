import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// One linked pair of rooms: a Matrix room and a MUC, bridged both ways.
///
/// Every event of the pair — from the MUC, from the homeserver, lifecycle commands and its own timers — goes
/// through one ``PortalQueue`` and is handled to completion before the next (per-room serial order). Portals of
/// different links run in parallel. ``enqueue(_:)`` may be called from anywhere.
///
/// ``run()`` feeds ``PortalStateMachine`` each event, performs the actions it returns (the `perform` switch and the
/// `Portal+…Effects` files) and feeds their outcomes back. The effects do the I/O; the few choices some still make (a
/// retry's look for its earlier copy, fallbacks, compare-and-write) are listed in docs/architecture.md ("Sub-machines,
/// and what the effects still choose"). The actor also owns its timers (one per ``PortalTimer`` kind, on the injected
/// clock) and the ``EphemeralSender``, which sends typing notices and markers off the portal's path.
actor Portal {
    /// The link this portal bridges.
    let link: RoomLink
    let context: BridgeContext
    let logger: Logger

    private let queue = PortalQueue()
    /// The room's logic and model.
    private(set) var machine: PortalStateMachine
    /// The pending timers, one per kind (owned here: replaced by a newer one, cancelled when the portal ends).
    private var timers: [PortalTimer: Task<Void, Never>] = [:]
    /// Typing notices, chat states and read markers on their way (off the portal's path).
    let ephemeralSender: EphemeralSender
    /// MUC reflections and XMPP → Matrix messages handled and not yet recorded: written together
    /// (``recordPending()``) before any action that must see them, before a stanza's receipt is given, and when a
    /// burst ends — one commit for a run of them (``RoomRecord``).
    var pendingRecords: [RoomRecord] = []
    /// The stanza-ids of the burst's plain XMPP messages that the map did not have when the burst began and that no
    /// record has named since: their lookups need no store call (``lookAhead(_:)``). Cleared when the burst ends.
    var unmapped: Set<StanzaID> = []
    /// Whether this portal holds one of the bridge's activation permits (``ActivationGate``): taken when an
    /// activation starts (the bot's Matrix join), given back with the status it ends on (active, error or pending).
    private var activationPermit = false

    init(link: RoomLink, context: BridgeContext) {
        self.link = link
        self.context = context
        let logger = context.logger.with(label: "bridge.portal").with([
            "matrix.room.id": link.matrixRoom.rawValue, "xmpp.muc": link.muc.description,
        ])
        self.logger = logger
        let matrix = context.matrix
        machine = PortalStateMachine(configuration: .init(
            room: link.matrixRoom, muc: link.muc, naming: context.naming, botUserID: matrix.botUserID,
            ghostUserID: { matrix.ghostUserID(forIdentity: $0) }, isGhost: { matrix.isGhost($0) }, syncName: link.syncName,
            mucDestroyed: link.mucDestroyed, roleLevels: context.roleLevels, matrixModeratorsToMUC: link.matrixModeratorsToMUC,
            mediaLinks: context.media?.signer, avatars: context.avatars != nil,
            uploadsMedia: context.xmppUploader != nil, relay: context.relay, matrixRelay: context.matrixRelay,
            decrypts: context.ghostDevices != nil))
        ephemeralSender = EphemeralSender { [context, logger] send in
            await Portal.performSend(send, link: link, context: context, logger: logger)
        }
    }

    /// Queues an event for this portal. Safe from any context; order of calls is order of handling. `receipt`: the
    /// XMPP stanza's (client mode), given once the event is handled: the effects of a room's XMPP event are durable
    /// when its handling ends (sends to Matrix are waited out and recorded; what the room model holds back, the
    /// archive still has after the resume point). The one hand-off that is not, a private message to a Matrix user's
    /// occupant passed to the DMs, does not occur in client mode: the account hosts no such occupants.
    nonisolated func enqueue(_ event: PortalEvent, receipt: XMPPReceipt? = nil) {
        queue.enqueue(event, receipt: receipt)
    }

    /// Closes the queue: later events are ignored, and ``run()`` returns once it has handled those already queued —
    /// unless its task is cancelled too, as at the bridge's shutdown, which stops it before the next event (see
    /// `handle(_:)`). Sends nothing itself: no occupant or ghost leaves a room.
    nonisolated func finish() {
        queue.finish()
    }

    /// Handles events until ``finish()`` or unlink. Returns when the loop ends.
    ///
    /// Each burst of queued events is handled in a child task that ends with the burst, so the memory of deep async
    /// call stacks (a ghost's setup through the Matrix client, an activation) is given back instead of being kept by
    /// this long-lived task (see ``PortalQueue``).
    func run() async {
        while true {
            await queue.waitForEvents()
            let (burst, finished) = queue.takeAll()
            if !burst.isEmpty {
                await withDiscardingTaskGroup { group in
                    group.addTask { await self.handle(burst) }
                }
            }
            if finished || machine.closed || Task.isCancelled { break }
        }
        queue.finish()
        leaveActivation()
        for timer in timers.values { timer.cancel() }
        ephemeralSender.finish()
    }

    /// Handles a burst of events in order (stops after unlink, and once shutdown cancelled the portal).
    ///
    /// After the cancellation nothing more is handled: every call to either side would fail, but store writes would
    /// not — a reflection of our own message queued behind a send that was cut short would move the room's resume
    /// point past that message, and the next start (or the standby taking over) would never catch it up. What is left
    /// queued is not lost: MUC messages come back from the archive after the resume point, Matrix events from the
    /// durable inbox.
    ///
    /// The records gathered before the cancellation are still written: they came from events handled whole (what they
    /// record happened: a reflection arrived, a message reached Matrix), and in a room without an archive an unrecorded
    /// reflection would leave its Matrix message undelivered in the inbox — sent once more after the restart.
    private func handle(_ burst: [PortalQueue.Entry]) async {
        await lookAhead(burst)
        defer { unmapped = [] }
        for entry in burst {
            if Task.isCancelled { break }
            await feed(.event(entry.event))
            if Task.isCancelled { break }   // cut short: not handled (a resumed session delivers it again)
            if let receipt = entry.receipt {
                // Acknowledged only once its gathered receipts are durable; unwritten (the store gone at shutdown), the
                // stanza stays unacknowledged and the server sends it again.
                let written = await recordPending()
                if Task.isCancelled { break }
                if written { await receipt.handled() }
            }
            if machine.closed { break }
        }
        _ = await recordPending()
    }

    /// Feeds the machine and performs what it asks, outcomes first (each outcome's actions run before the rest).
    private func feed(_ input: PortalStateMachine.Input) async {
        var actions = machine.receive(input, now: context.clock.now())
        while !actions.isEmpty {
            let action = actions.removeFirst()
            if !pendingRecords.isEmpty && (pendingRecords.count >= Self.maximumPendingRecords || !Self.gathersWithRecords(action)) {
                _ = await recordPending()
            }
            // Waited for here, not in `perform`: its async frame (every effect's locals) is far larger than this one's.
            if case .bot(.joinMatrix) = action, !activationPermit {
                await context.activations.enter()
                activationPermit = true
                if Task.isCancelled { return leaveActivation() }   // shutdown: the activation would only fail
            }
            if let outcome = await perform(action) {
                actions = machine.receive(outcome, now: context.clock.now()) + actions
            }
        }
    }

    /// Gives the activation permit back, if this portal holds one.
    private func leaveActivation() {
        guard activationPermit else { return }
        activationPermit = false
        context.activations.leave()
    }

    /// The most records gathered before they are written, whatever comes next: a long burst (a busy room after a
    /// pause) commits every so often, so a crash makes catch-up repeat at most this many sends (see ``RoomRecord`` for
    /// why a repeat is no duplicate, and the one case where it is). 64 already makes the commit a small share of a
    /// message's cost.
    static let maximumPendingRecords = 64

    /// Whether `action` may run before the gathered records are written: another record, a log line, a typing notice
    /// or its timer (neither reads the map; a read marker's lookup does, and waits), or the next plain XMPP message's
    /// way to Matrix — its map lookup (which also checks the gathered records: see ``lookUpBridged(_:)``) and its first
    /// send. Everything else is ordered after them, as if each had been written when it was handled: a message that
    /// refers to another (a reply, a correction, a reaction, a retraction) is looked up in the map, a retried send
    /// first looks for an earlier copy, and every other effect may read the map or the resume point.
    private static func gathersWithRecords(_ action: PortalStateMachine.Action) -> Bool {
        switch action {
        case .matrixDelivery(.recordReflection), .matrixDelivery(.recordBridged), .matrixDelivery(.recordRefused),
             .matrixDelivery(.log), .xmppDelivery(.log), .log,
             .ephemeral(.send), .ephemeral(.scheduleFlush), .ephemeral(.log):
            true
        case .matrixDelivery(.lookUpBridged(let message)):
            !message.references.refersToAnother
        case .matrixDelivery(.send(let delivery)):
            delivery.attempt == 0
        default:
            false
        }
    }

    /// Performs one action; returns its outcome when the machine waits for one.
    private func perform(_ action: PortalStateMachine.Action) async -> PortalStateMachine.Input? {
        switch action {
        case .bot(let action): return await performBot(action)
        case .puppets(let action): return await performPuppets(action)
        case .ghosts(let action): return await performGhosts(action)
        case .avatars(let action): await performAvatars(action)
        case .postNotice(let text, let subject): await postNotice(text, subject: subject)
        case .directChats(.inbound(let inbound)):
            context.directChats?.enqueue(.fromXMPP(inbound, linkedRoom: link.matrixRoom, muc: link.muc))
        case .directChats(.bounce(let bounce)): context.directChats?.enqueue(.bounced(bounce))
        case .matrixDelivery(let action): return await performMatrixDelivery(action)
        case .xmppDelivery(let action): return await performXMPPDelivery(action)
        case .catchUp(let action): return await performCatchUp(action)
        case .ephemeral(let action): return await performEphemeral(action)
        case .roles(let action): return await performRoles(action)
        case .loadRoom: return await loadRoom()
        case .loadUndelivered: return await loadUndelivered()
        case .dequeue(let seq): await dequeue(seq: seq)
        case .setStatus(let status, let detail):
            await setStatus(status, detail: detail)
            leaveActivation()
        case .schedule(let timer, let instant): schedule(timer, at: instant)
        case .invites(let action): return await performInvites(action)
        case .roomState(let action): return await performRoomState(action)
        case .unlink(let plan): await unlink(plan)
        case .log(let entry): logger.log(entry.level, entry.message, metadata: entry.metadata)
        }
        return nil
    }

    /// Queues `timer`'s event once the injected clock reaches `instant`, replacing the pending timer of that kind.
    func schedule(_ timer: PortalTimer, at instant: ContinuousClock.Instant) {
        timers[timer]?.cancel()
        let clock = context.clock
        timers[timer] = Task { [self] in
            guard (try? await clock.sleep(until: instant)) != nil else { return }
            enqueue(timer.event)
        }
    }
}
