import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import MatrixClient
import Synchronization

/// The bridge core: one ``Portal`` per link, fed by the XMPP link's events and the homeserver's transactions,
/// plus a watcher that applies link changes made by the CLI while it runs.
///
/// Events reach their portal in one hop: the XMPP task and the appservice handler look the portal up in the shared
/// ``PortalDirectory`` and enqueue. ``run(xmppEvents:)`` owns the rest — link reloads, timers, shutdown — in one loop.
/// Portals run as child tasks.
public final class Bridge: Sendable {
    let context: BridgeContext
    let directory: PortalDirectory
    private let commands: AsyncStream<Command>
    private let control: AsyncStream<Command>.Continuation
    /// How often the store is checked for link changes made by `isthmus link/unlink`.
    private let linkPollInterval: Duration
    /// How often each portal checks (XEP-0410 self-ping) that the bridge is still in its MUC.
    private let selfCheckInterval: Duration
    /// How often the store is probed while the disk is full or the database out of reach (see ``StoreWriteGate``).
    private let diskFullProbeInterval: Duration
    /// Holes in the homeserver's transaction ids while it may be retrying us (see ``TransactionGapDetector``).
    private let gaps: Mutex<TransactionGapDetector>
    /// Invitations and `!isthmus` commands (nil: the bridge ignores both, as in tests that do not need them).
    let selfService: SelfServiceDesk?
    /// Rooms opened through gateway aliases (`gateway.matrix_aliases`); nil when off.
    public let gateway: DynamicPortals?
    /// Matrix rooms hosted as MUCs for XMPP users (`gateway.xmpp_rooms`); nil when off.
    public let gatewayRooms: GatewayRooms?

    /// The gateway's parts to run (see ``DynamicPortals`` and ``GatewayRooms``).
    public struct GatewayWiring: Sendable {
        public var portals: DynamicPortals.Settings?
        public var rooms: GatewayRooms.Settings?
        public var client: MatrixClient

        public init(portals: DynamicPortals.Settings?, rooms: GatewayRooms.Settings?, client: MatrixClient) {
            self.portals = portals
            self.rooms = rooms
            self.client = client
        }
    }
    /// Matrix client mode: the account's `/sync`, the bridge's Matrix intake (nil: an application service's pushes).
    private let matrixSync: (any MatrixSyncSource)?
    /// MUC private messages ↔ Matrix DM rooms.
    private let directChats: DirectChats

    enum Command: Sendable {
        /// The homeserver may be retrying us: check timelines in the background a few times (a stranded last message).
        case homeserverRetrying
        case reloadLinks
        case checkTimelines
        case selfCheck
        case portal(PortalNotice)
        case shutdown
    }

    /// After the bridge started or failed a transaction, rooms check their timelines this long afterwards (in the
    /// background: a message stranded with nothing after it). Synapse retries a failed transaction after 2 s, then 4 s, …
    /// Two rounds: each costs the homeserver one `/messages` call per linked room.
    public static let defaultBackgroundTimelineChecks: [Duration] = [.seconds(10), .seconds(40)]
    private let backgroundTimelineChecks: [Duration]
    /// Rooms asked at once in a round of background checks (then a pause), so a thousand rooms do not hit the
    /// homeserver in the same instant.
    static let timelineCheckBatch = 50
    static let timelineCheckPause: Duration = .milliseconds(100)

    /// Creates the bridge over a store and both links. No I/O until ``run(xmppEvents:)``.
    /// `timelineCheckWindow`: how long after a start or a failed transaction the homeserver may strand a transaction
    /// (see ``TransactionGapDetector``; tests shorten it). `clock`: the time source of every decision (tests inject one).
    /// `backgroundTimelineChecks`: when rooms check their timelines after a start or a failed transaction.
    /// `metrics`: where the bridge counts what it does (the runtime shares it with the operations listener).
    /// `diskFullProbeInterval`: how often a full (or unreachable) store is probed for a write again.
    /// `roleLevels`: the power level each MUC position gives a ghost. `relay`: client mode's format of the relayed
    /// Matrix messages (nil: Matrix users have puppets). `subscriptions`: client mode's answer to presence subscription
    /// requests (`xmpp.client.accept_subscriptions`). `matrixRelay` and `matrixSync`: Matrix client mode — XMPP
    /// occupants speak through the account (with `matrix` a ``RelayMatrixLink``), whose `/sync` is the Matrix intake.
    /// `encryption`: the ghosts get encryption devices at their first encrypted room (nil: off).
    public init(store: Store, xmpp: any XMPPLink, matrix: any MatrixLink, naming: BridgeNaming, logger: Logger,
                linkPollInterval: Duration = .seconds(1), selfCheckInterval: Duration = .seconds(300),
                timelineCheckWindow: Duration = .seconds(120),
                backgroundTimelineChecks: [Duration] = Bridge.defaultBackgroundTimelineChecks,
                clock: TimeSource = .system, metrics: BridgeMetrics = BridgeMetrics(),
                diskFullProbeInterval: Duration = .seconds(5), selfService: SelfServiceSettings? = nil,
                roleLevels: RoleLevels = RoleLevels(),
                media: MediaSettings? = nil, relay: RelayFormat? = nil, subscriptions: Config.SubscriptionPolicy = .none,
                matrixRelay: MatrixRelayFormat? = nil, matrixSync: (any MatrixSyncSource)? = nil,
                gateway: GatewayWiring? = nil, encryption: EncryptionWiring? = nil) {
        self.matrixSync = matrixSync
        self.backgroundTimelineChecks = backgroundTimelineChecks
        let (commands, control) = AsyncStream.makeStream(of: Command.self)
        self.commands = commands
        self.control = control
        self.linkPollInterval = linkPollInterval
        self.selfCheckInterval = selfCheckInterval
        self.diskFullProbeInterval = diskFullProbeInterval
        var gaps = TransactionGapDetector(window: timelineCheckWindow)
        gaps.arm(now: clock.now())
        self.gaps = Mutex(gaps)
        var context = BridgeContext(store: store, xmpp: xmpp, matrix: matrix, naming: naming, logger: logger.with(label: "bridge"),
                                    clock: clock, metrics: metrics,
                                    writeGate: StoreWriteGate(logger: logger.with(label: "bridge")), notify: { control.yield(.portal($0)) },
                                    roleLevels: roleLevels,
                                    media: media, mediaImporter: media.map { MediaImporter(settings: $0, logger: logger.with(label: "media")) })
        context.relay = relay
        context.matrixRelay = matrixRelay
        context.subscriptions = SubscriptionDesk(policy: subscriptions)
        if let media, let importer = context.mediaImporter {
            context.avatars = AvatarFetcher(settings: media, importer: importer, store: store, logger: logger.with(label: "avatars"))
            let server = naming.identity == .account ? JID(naming.componentDomain) : XMPPUploader.serverDomain(ofComponent: naming.componentDomain)
            if media.xmppUpload, let server {
                context.xmppUploader = XMPPUploader(settings: media, importer: importer, xmpp: xmpp, serverDomain: server,
                                                    requester: naming.botOccupant.bare, clock: clock, logger: logger.with(label: "media"))
            }
        }
        context.ghostDevices = encryption?.devices
        context.encryptedRooms = encryption?.policy ?? .refused
        directChats = DirectChats(context: context)
        context.directChats = directChats
        self.context = context
        let directory = PortalDirectory()
        self.directory = directory
        if let selfService {
            self.selfService = SelfServiceDesk(settings: selfService, context: context.with(logger: logger.with(label: "bridge.selfservice")),
                                               directory: directory, reloadLinks: { control.yield(.reloadLinks) })
        } else {
            self.selfService = nil
        }
        self.gateway = gateway.flatMap { wiring in
            wiring.portals.map {
                DynamicPortals(settings: $0, store: store, client: wiring.client, xmpp: xmpp, metrics: metrics.gateway,
                               logger: logger.with(label: "bridge.gateway"), clock: clock, reloadLinks: { control.yield(.reloadLinks) })
            }
        }
        gatewayRooms = gateway.flatMap { wiring in
            wiring.rooms.map {
                GatewayRooms(settings: $0, store: store, client: wiring.client, xmpp: xmpp, metrics: metrics.gateway,
                             logger: logger.with(label: "bridge.gateway.rooms"), importer: context.mediaImporter, mediaLinks: media?.signer)
            }
        }
    }

    /// The bridge's metrics.
    public var metrics: BridgeMetrics { context.metrics }

    /// Runs until ``shutdown()``: routes XMPP events to portals and applies link changes. Graceful: portals finish the
    /// event at hand; nobody leaves any room. `xmppEvents` is consumed by one child task that hands each event to its
    /// portal directly.
    public func run<Events: AsyncSequence & Sendable>(xmppEvents: Events) async
    where Events.Element == XMPPLinkEvent, Events.Failure == Never {
        await run(xmppArrivals: XMPPArrivals(events: xmppEvents))
    }

    /// ``run(xmppEvents:)`` over events that may carry receipts (client mode's account: ``SessionXMPPLink/events``).
    public func run<Events: AsyncSequence & Sendable>(xmppArrivals xmppEvents: Events) async
    where Events.Element == XMPPLinkArrival, Events.Failure == Never {
        let (logger, control, directory, writeGate) = (context.logger, self.control, self.directory, context.writeGate)
        let directChats = self.directChats
        await gatewayRooms?.restore()
        var services: [any BridgeService] = [
            XMPPEventRouter(events: xmppEvents, context: context, directory: directory, gatewayRooms: gatewayRooms),
            StoreProbe(store: context.store, writeGate: writeGate, interval: diskFullProbeInterval),
            LinkWatcher(store: context.store, interval: linkPollInterval) { control.yield(.reloadLinks) },
            Ticker(interval: selfCheckInterval) { control.yield(.selfCheck) },
        ]
        if let gateway { services.append(GatewaySweeper(portals: gateway)) }
        if let matrixSync { services.append(MatrixSyncService(source: matrixSync, bridge: self, account: context.matrix.botUserID)) }
        if let devices = context.ghostDevices { services.append(HeldEncryptedEventSweeper(devices: devices, bridge: self)) }
        await withTaskGroup(of: Void.self) { group in
            for service in services { group.addTask { await service.run() } }
            if let selfService {
                group.addTask { await selfService.run() }
            }
            group.addTask { await directChats.run() }
            control.yield(.homeserverRetrying)
            for await command in commands {
                switch command {
                case .homeserverRetrying:
                    let schedule = TimelineCheckSchedule(delays: backgroundTimelineChecks) { control.yield(.checkTimelines) }
                    group.addTask { await schedule.run() }
                case .reloadLinks:
                    await reloadLinks(&group)
                case .checkTimelines:
                    let round = TimelineCheckRound(portals: directory.all, batch: Self.timelineCheckBatch, pause: Self.timelineCheckPause)
                    group.addTask { await round.run() }
                case .selfCheck:
                    for portal in directory.all { portal.enqueue(.selfCheck) }
                case .portal(let notice):
                    switch notice {
                    case .unlinked(let room):
                        directory.remove(room)
                        directChats.enqueue(.linkStatus(room, .error))
                    case .moved(let room):
                        directory.remove(room)
                        directChats.enqueue(.linkStatus(room, .error))   // its DMs now wait for the new room's portal
                        await reloadLinks(&group)
                    case .status(let room, let status):
                        directChats.enqueue(.linkStatus(room, status))
                    }
                case .shutdown:
                    logger.info("Bridge stopping")
                    writeGate.finish()
                    selfService?.finish()
                    directChats.finish()
                    for portal in directory.all { portal.finish() }
                    group.cancelAll()
                    return
                }
            }
        }
    }

    /// Stops ``run(xmppEvents:)`` once its loop has handled the commands queued before this one; portals then finish
    /// only the event at hand (what else they had queued waits in the archive and the durable inbox).
    public func shutdown() {
        control.yield(.shutdown)
        control.finish()
    }

    /// Accepts Matrix events from a homeserver transaction: events of linked rooms and of DM rooms (also a ghost's
    /// invitation that opens one) are written to the durable inbox (this returns only once they are) and handed as they
    /// are, in order, to their portals or to ``DirectChats``. Events of other rooms are ignored. `transaction`: the
    /// homeserver's id for the batch, when there is one (see ``TransactionGapDetector``); it is recorded as processed
    /// in the same commit as the events (alone when none is kept), as ``AppServiceHandler/handle(_:)`` requires.
    /// Called from the appservice listener, one transaction at a time; safe from any context.
    /// If it throws, nothing is recorded and the homeserver will retry the transaction later — and may then strand the
    /// next one (see `Portal+CatchUpEffects`), so portals check their timelines in the background a few times.
    public func acceptMatrixEvents(_ events: [MatrixRoomEvent], transaction: TransactionID? = nil) async throws {
        try await acceptMatrixEvents(events, mark: transaction.map(IntakeMark.transaction))
    }

    /// ``acceptMatrixEvents(_:transaction:)`` for any intake: `mark` is recorded in the commit that keeps the events
    /// (alone when none is kept) — a transaction processed, or (Matrix client mode) the sync position after the batch.
    /// Only a homeserver transaction's id shows holes in what the homeserver pushed (``TransactionGapDetector``); a
    /// sync's gaps are its `limited` timelines.
    /// `limited` (a sync's `limited` timelines): rooms missing events before these; each checks its timeline first —
    /// before this batch's events, which wait behind the check, or at once when the batch has none for it.
    public func acceptMatrixEvents(_ events: [MatrixRoomEvent], mark: IntakeMark?, limited: Set<RoomID> = []) async throws {
        let accepted = context.clock.now()
        var transaction: TransactionID?
        if case .transaction(let id)? = mark { transaction = id }
        let gap: TransactionGapDetector.Gap
        if case .syncPosition? = mark { gap = .none } else { gap = gaps.withLock { $0.observe(transaction, now: accepted) } }
        do {
            // A full disk or an unreachable database: refused (500) before anything is read, so the homeserver
            // retries it later.
            if context.writeGate.isClosed { throw StoreClosedError() }
            var linked: Set<RoomID> = []
            var direct: Set<RoomID> = []
            var hosted: Set<RoomID> = []
            var hostedAndLinked: Set<RoomID> = []
            if !events.isEmpty {
                let rooms = Set(events.map(\.room))
                linked = try await context.store.linkedRooms(among: rooms)
                if let gatewayRooms {
                    // The rooms the gateway hosts for XMPP users keep their events in the inbox too — unless linked:
                    // the portal consumes those, and the gateway gets a copy.
                    let all = await gatewayRooms.hostedRooms(among: rooms)
                    hostedAndLinked = all.intersection(linked)
                    hosted = all.subtracting(linked)
                }
                // Only rooms that are not linked can be DMs: most transactions have none, and skip the store read.
                let others = rooms.subtracting(linked).subtracting(hosted)
                if !others.isEmpty {
                    direct = try await context.store.directRooms(among: others)
                    // A Matrix user inviting a ghost into a new room: a DM from now on (its invite queued below).
                    let unknown = others.subtracting(direct)
                    if !unknown.isEmpty { direct.formUnion(try await directChats.openFromInvitations(events, in: unknown)) }
                }
            }
            let rows = try MatrixIntake.rows(events, linked: linked, direct: direct, hosted: hosted)
            guard !rows.isEmpty else {
                if let mark { try await context.store.record(mark) }
                for room in limited { directory.portal(for: room)?.enqueue(.checkTimeline) }
                // The hole counts even when this transaction brings nothing to keep (only our ghosts' echoes, or
                // other rooms' events): the next one would show no hole, and what sits behind it would go out
                // before the stranded message.
                if MatrixIntake.gapAction(gap, handOffs: []) == .checkEveryRoom { flagTimelineGap(transaction) }
                return
            }
            // In flight before the commit: a portal may take the rows from the store (a drain, a timeline check) and
            // send them before this call returns. A replay of a delivered message leaves an entry that expires.
            // (Linked rooms only: the latency metrics follow room messages to their MUC reflection, which DMs lack.)
            for event in events where linked.contains(event.room) {
                if let kind = event.metricsKind {
                    context.metrics.enteredFromMatrix(room: event.room, originID: context.naming.originID(for: event.eventID),
                                                      kind: kind, at: accepted, now: accepted)
                }
            }
            let added = try await context.store.enqueueInbox(rows.map { ($0.room, $0.eventID, $0.payload) }, recording: mark)
            let handOffs = MatrixIntake.handOffs(added, events: events, direct: direct, hosted: hosted)
            for room in limited {
                let waiting = handOffs.contains { $0.room == room && $0.toPortal }
                directory.portal(for: room)?.enqueue(waiting ? .timelineGap : .checkTimeline)
            }
            switch MatrixIntake.gapAction(gap, handOffs: handOffs) {
            case .checkEveryRoom:
                flagTimelineGap(transaction)
            case .checkRooms(let rooms):
                context.logger.debug("A homeserver transaction is still missing; this one's rooms check their timelines first",
                                     metadata: ["matrix.txn.id": transaction?.rawValue ?? "-"])
                for room in rooms { directory.portal(for: room)?.enqueue(.timelineGap) }
            case .none:
                break
            }
            for handOff in handOffs {
                for item in handOff.queued where item.event.content == .encrypted { context.metrics.encryptedEvent(direct: handOff.direct) }
                if handOff.direct {
                    directChats.enqueue(.matrixEvents(handOff.queued))
                } else if handOff.hosted {
                    await gatewayRooms?.matrix(handOff.queued, durable: true)
                } else {
                    directory.portal(for: handOff.room)?.enqueue(.matrixEvents(handOff.queued))
                    if hostedAndLinked.contains(handOff.room) { await gatewayRooms?.matrix(handOff.queued, durable: false) }
                }
            }
        } catch {
            _ = context.writeGate.noteFailure(error)
            gaps.withLock { $0.arm(now: context.clock.now()) }
            control.yield(.homeserverRetrying)
            throw error
        }
    }

    /// Whether ``acceptMatrixEvents(_:transaction:)`` recorded `transaction` as processed. Reads the store.
    func isTransactionProcessed(_ transaction: TransactionID) async throws -> Bool {
        try await context.store.isTransactionProcessed(transaction)
    }

    /// Of `events` in `room`, those ``acceptMatrixEvents(_:transaction:)`` queued or a portal bridged. Reads the store.
    func seenMatrixEvents(_ events: [EventID], in room: RoomID) async throws -> Set<EventID> {
        try await context.store.seenMatrixEvents(room, among: events)
    }

    /// A transaction before `transaction` may be stranded: every room checks its timeline before its next Matrix events.
    private func flagTimelineGap(_ transaction: TransactionID?) {
        context.logger.info("A homeserver transaction may be missing; rooms check their timelines first",
                            metadata: ["matrix.txn.id": transaction?.rawValue ?? "-"])
        for portal in directory.all { portal.enqueue(.timelineGap) }
    }

    /// Hands typing or receipts to the portal of `room`, if it is linked: not stored, not waited for (best effort).
    func routeEphemeral(_ event: MatrixEphemeral, to room: RoomID) {
        directory.portal(for: room)?.enqueue(.matrixEphemeral(event))
    }

    /// Whether `user` is a ghost this bridge created (for the homeserver's user query).
    public func isKnownGhost(_ user: UserID) async -> Bool {
        (try? await context.store.isKnownGhost(user)) ?? false
    }

    private func reloadLinks(_ group: inout TaskGroup<Void>) async {
        let links: [RoomLink]
        do {
            links = try await context.store.roomLinks()
        } catch {
            context.logger.error("Could not read links", metadata: ["error": "\(error)"])
            return
        }
        for link in links {
            if directory.portal(for: link.matrixRoom) != nil {
                if link.unlinking { directory.unlink(link.matrixRoom) }
                continue
            }
            // A consent handshake still has the MUC: it asks for a reload when it has left.
            if directory.isReserved(link.muc) { continue }
            let portal = Portal(link: link, context: context)
            group.addTask { await portal.run() }
            directory.add(portal)
            context.logger.info("Link loaded", metadata: ["matrix.room.id": link.matrixRoom.rawValue, "xmpp.muc": link.muc.description])
        }
    }
}

/// Events without receipts (the component, the fakes) as arrivals.
struct XMPPArrivals<Events: AsyncSequence & Sendable>: AsyncSequence, Sendable
where Events.Element == XMPPLinkEvent, Events.Failure == Never {
    typealias Element = XMPPLinkArrival
    typealias Failure = Never

    let events: Events

    func makeAsyncIterator() -> Iterator {
        Iterator(base: events.makeAsyncIterator())
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: Events.AsyncIterator

        mutating func next() async -> XMPPLinkArrival? {
            await next(isolation: nil)
        }

        mutating func next(isolation actor: isolated (any Actor)?) async -> XMPPLinkArrival? {
            guard let event = await base.next(isolation: actor) else { return nil }
            return XMPPLinkArrival(event)
        }
    }
}
