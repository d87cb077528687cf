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
    let control: AsyncStream<Command>.Continuation
    /// How often the store is checked for link changes made by `isthmus link/unlink`.
    private let linkPollInterval: Duration
    /// How often each portal checks (XEP-0410 self-ping) that the bridge is still in its MUC.
    private let selfCheckInterval: Duration
    /// How often the store is probed while the disk is full or the database out of reach (see ``StoreWriteGate``).
    private let diskFullProbeInterval: Duration
    /// Holes in the homeserver's transaction ids while it may be retrying us (see ``TransactionGapDetector``).
    let gaps: Mutex<TransactionGapDetector>
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
    let directChats: DirectChats

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
