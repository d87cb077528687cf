import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import Matrix
import MatrixClient

/// Opens MUCs to Matrix users on demand: the homeserver asks the appservice about an alias in its namespace
/// (`GET /_matrix/app/v1/rooms/{alias}`, because a user is joining it), and this answers whether it now exists.
///
/// For a gateway alias (``GatewayAliases``) of an allowed MUC that exists and is open, it creates a public Matrix room
/// with that alias (the bot as creator, the MUC's name and subject as name and topic), links it (kind `dynamic`,
/// with the MUC's name kept in sync), lets the bridge join the MUC, and answers yes — the user's join then goes
/// through. A MUC that is already linked gets the alias pointed at its room instead (another spelling of the same
/// MUC asks again: Matrix aliases are case-sensitive, JIDs are not), so one MUC never has two portals. Queries for one
/// MUC are answered one after another; different MUCs in parallel.
///
/// Every refusal is a 404 with nothing left behind: no room, no alias, no link (``GatewayPolicy/Refusal``).
public actor DynamicPortals {
    /// What `serve` passes in.
    public struct Settings: Sendable {
        public var gateway: Config.Gateway
        /// The bridge's Matrix users: the bot creates the rooms; the prefix is the aliases'.
        public var namespace: GhostNamespace
        /// The bridge's occupant JID, from which the MUC is asked (disco#info).
        public var asker: JID
        /// How long an answer waits for the bridge to be in the MUC. Past it the room stays (the bridge keeps trying to
        /// join, as for any link) and the answer is yes.
        public var activationTimeout: Duration = .seconds(20)
        /// How often idle dynamic rooms are looked for (``GatewaySweeper``); the first look is at start.
        public var sweepInterval: Duration = .seconds(3600)

        public var aliases: GatewayAliases { GatewayAliases(prefix: namespace.prefix, serverName: namespace.serverName) }
        public var bot: UserID { namespace.botUserID }

        public init(gateway: Config.Gateway, namespace: GhostNamespace, asker: JID) {
            self.gateway = gateway
            self.namespace = namespace
            self.asker = asker
        }
    }

    /// What an alias query came to.
    public enum Outcome: Sendable, Equatable {
        /// A new room and link were made.
        case opened(RoomID)
        /// The alias now points at the MUC's existing room.
        case bound(RoomID)
        /// 404.
        case refused(GatewayPolicy.Refusal)

        var label: String {
            switch self {
            case .opened: "opened"
            case .bound: "bound"
            case .refused(let refusal): refusal.label
            }
        }
    }

    let settings: Settings
    /// The gateway in third-party lookups.
    public nonisolated var directory: GatewayDirectory { GatewayDirectory(aliases: settings.aliases, settings: settings.gateway) }
    let store: Store
    let client: MatrixClient
    private let xmpp: any XMPPLink
    private let metrics: GatewayMetrics
    let logger: Logger
    let clock: TimeSource
    let reloadLinks: @Sendable () -> Void
    /// The query being answered for each MUC; the next one for it waits for it.
    private var queries: [JID: Task<Outcome, Never>] = [:]
    /// When this process began opening rooms in the last minute (the rate limit; a refused probe counts too).
    private var recentOpens: [ContinuousClock.Instant] = []
    /// Rooms being opened now, counted against `max_dynamic_rooms` before their links exist.
    private var opening = 0
    private var refusals = RefusalLogLimiter()

    public init(settings: Settings, store: Store, client: MatrixClient, xmpp: any XMPPLink, metrics: GatewayMetrics,
                logger: Logger, clock: TimeSource = .system, reloadLinks: @escaping @Sendable () -> Void) {
        self.settings = settings
        self.store = store
        self.client = client
        self.xmpp = xmpp
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.reloadLinks = reloadLinks
    }

    /// The homeserver's alias query: whether `alias` names a room now.
    public func aliasQueried(_ alias: RoomAlias) async -> Bool {
        guard let muc = settings.aliases.muc(for: alias) else {
            logger.debug("Alias query for an alias that names no MUC", metadata: ["matrix.alias": alias.rawValue])
            return false
        }
        let previous = queries[muc]
        let query = Task { [self] in
            _ = await previous?.value
            return await open(alias, muc: muc)
        }
        queries[muc] = query
        let outcome = await query.value
        if queries[muc] == query { queries[muc] = nil }
        metrics.aliasQueried(outcome.label)
        switch outcome {
        case .opened(let room):
            logger.info("Gateway room opened", metadata: ["matrix.alias": alias.rawValue, "matrix.room": room.rawValue, "xmpp.muc": muc.description])
            return true
        case .bound(let room):
            logger.info("Gateway alias pointed at the MUC's room", metadata: [
                "matrix.alias": alias.rawValue, "matrix.room": room.rawValue, "xmpp.muc": muc.description])
            return true
        case .refused(let refusal):
            if let (_, suppressed) = refusals.refused(.init(address: muc.domain, reason: refusal.label), now: clock.now()) {
                logger.notice("Gateway alias refused", metadata: [
                    "matrix.alias": alias.rawValue, "xmpp.muc": muc.description, "reason": refusal.reason,
                    "suppressed": String(suppressed)])
            }
            return false
        }
    }

    private func open(_ alias: RoomAlias, muc: JID) async -> Outcome {
        let links: [RoomLink]
        do {
            links = try await store.roomLinks()
        } catch {
            logger.error("Gateway alias query: the store cannot be read", metadata: ["error": "\(error)"])
            return .refused(.unreachable)
        }
        let existing = links.first { $0.muc == muc }
        var existingIsPublic = false
        if let existing, existing.kind == .static, !existing.unlinking {
            existingIsPublic = await isPublic(existing.matrixRoom)
        }
        let now = clock.now()
        recentOpens.removeAll { now - $0 > .seconds(60) }
        if let refusal = GatewayPolicy.refusal(for: muc, settings: settings.gateway, existing: existing, existingIsPublic: existingIsPublic,
                                               dynamicRooms: links.count { $0.kind == .dynamic } + opening, opensInLastMinute: recentOpens.count) {
            return .refused(refusal)
        }
        if let existing { return await bind(alias, to: existing.matrixRoom) }
        // The slot is taken before anything is awaited: queries for other MUCs run meanwhile and must count it.
        recentOpens.append(now)
        opening += 1
        defer { opening -= 1 }
        let features: RoomFeatures
        do {
            features = try await xmpp.roomFeatures(room: muc, as: settings.asker)
        } catch {
            return .refused(GatewayPolicy.refusal(probeError: error))
        }
        if let refusal = GatewayPolicy.refusal(probed: features) { return .refused(refusal) }
        return await create(alias, muc: muc, features: features)
    }

    /// A new public room with `alias`, linked with `muc`; yes once the bridge is in the MUC (or still trying).
    private func create(_ alias: RoomAlias, muc: JID, features: RoomFeatures) async -> Outcome {
        let room: RoomID
        do {
            room = try await client.createRoom(CreateRoomRequest(preset: "public_chat", name: features.name ?? muc.localpart,
                                                                 topic: features.subject, roomAliasName: alias.localpart),
                                               as: settings.bot)
        } catch {
            logger.warning("Gateway room could not be made", metadata: ["matrix.alias": alias.rawValue, "error": error.message])
            return .refused(.homeserverRefused)
        }
        let link = RoomLink(matrixRoom: room, matrixAlias: alias, muc: muc, syncName: true, kind: .dynamic)
        do {
            try await store.insertRoomLink(link)
        } catch {
            // Linked meanwhile by someone else (the CLI): this room is not needed.
            logger.warning("Gateway room made but not linked", metadata: ["matrix.room": room.rawValue, "error": "\(error)"])
            await close(room, alias: alias, leave: true)
            return .refused(.closing)
        }
        reloadLinks()
        await refreshRoomCount()
        switch await activation(of: room) {
        case .error(let detail):
            logger.warning("Gateway room closed: the bridge could not enter the MUC", metadata: [
                "matrix.room": room.rawValue, "xmpp.muc": muc.description, "detail": detail])
            await close(room, alias: alias, leave: false)
            _ = try? await store.markUnlinking(matrixRoom: room)
            reloadLinks()
            return .refused(.joinFailed)
        case .active, .waiting:
            return .opened(room)
        }
    }

    /// Points `alias` at `room`; a conflict with the same room is success (an earlier attempt made it).
    private func bind(_ alias: RoomAlias, to room: RoomID) async -> Outcome {
        do {
            try await client.setAlias(alias, to: room, as: settings.bot)
            return .bound(room)
        } catch {
            if error.errcode == .roomInUse || error.status == 409, (try? await client.resolveAlias(alias).roomID) == room {
                return .bound(room)
            }
            logger.warning("Gateway alias could not be pointed at the MUC's room", metadata: [
                "matrix.alias": alias.rawValue, "matrix.room": room.rawValue, "error": error.message])
            return .refused(.homeserverRefused)
        }
    }

    private enum Activation { case active, error(String), waiting }

    /// Waits (polling the store, as `serve`'s portals report there) until the new link is active or failed.
    private func activation(of room: RoomID) async -> Activation {
        let deadline = clock.now() + settings.activationTimeout
        while clock.now() < deadline {
            if let link = try? await store.roomLink(room) {
                switch link.status {
                case .active: return .active
                case .error: return .error(link.detail ?? "")
                case .pending: break
                }
            }
            do { try await clock.sleep(until: min(deadline, clock.now() + .milliseconds(100))) } catch { return .waiting }
        }
        return .waiting
    }

    /// Whether `room`'s join rule is `public` (read as the bot; unknown → not public).
    private func isPublic(_ room: RoomID) async -> Bool {
        struct JoinRules: Decodable { var join_rule: String? }
        let rules = try? await client.stateEvent(JoinRules.self, type: "m.room.join_rules", in: room, as: settings.bot)
        return rules?.join_rule == "public"
    }

    /// Takes a room the gateway made out of use: its alias removed, its join rule `invite` (nobody walks into a room
    /// no one bridges); with `leave` the bot leaves it too (else the unlink that follows makes it leave, after taking the
    /// ghosts' power back).
    func close(_ room: RoomID, alias: RoomAlias?, leave: Bool) async {
        if let alias { try? await client.deleteAlias(alias, as: settings.bot) }
        struct JoinRules: Encodable { var join_rule = "invite" }
        _ = try? await client.sendState(JoinRules(), type: "m.room.join_rules", to: room, as: settings.bot)
        if leave { try? await client.leave(room, as: settings.bot, reason: "This bridged room was closed.") }
    }

    /// Sets the dynamic-room gauge from the store.
    func refreshRoomCount() async {
        if let links = try? await store.roomLinks() { metrics.setDynamicRooms(links.count { $0.kind == .dynamic }) }
    }
}
