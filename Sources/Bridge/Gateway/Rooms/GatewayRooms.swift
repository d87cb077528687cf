import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import Matrix
import Media
import MatrixClient
import XMPP

/// The rooms the component hosts for XMPP users (`gateway.xmpp_rooms`): an XMPP user joins
/// `#alias%server@component/nick` (``GatewayRoomAddress``), its ghost joins the Matrix room behind the alias — the
/// Matrix room's join rules decide — and the component then speaks as that room. Each room is a
/// ``GatewayRoomMachine``; this performs its actions (Matrix calls as the ghosts, stanzas from the room) one input at
/// a time per room, rooms in parallel. Its occupants are kept in the store, so a restart keeps them in.
public actor GatewayRooms {
    /// What `serve` passes in.
    public struct Settings: Sendable {
        public var gateway: Config.Gateway
        public var namespace: GhostNamespace
        public var naming: BridgeNaming

        public init(gateway: Config.Gateway, namespace: GhostNamespace, naming: BridgeNaming) {
            self.gateway = gateway
            self.namespace = namespace
            self.naming = naming
        }
    }

    let settings: Settings
    let store: Store
    let client: MatrixClient
    let xmpp: any XMPPLink
    let metrics: GatewayMetrics
    let logger: Logger
    /// Fetches XMPP users' files and uploads them; nil: files go as links.
    let importer: MediaImporter?
    /// Signs links to Matrix files; nil: Matrix files arrive as their names.
    let mediaLinks: MediaLinkSigner?
    var machines: [JID: GatewayRoomMachine] = [:]
    var byMatrixRoom: [RoomID: JID] = [:]
    /// The input being handled for each room; the next one for it waits for it.
    var tails: [JID: Task<Void, Never>] = [:]
    var tailNumbers: [JID: Int] = [:]
    var tailCount = 0
    /// Service requests (room lists, searches, archive pages, descriptions) being answered; past the limit, refused.
    var serviceRequests = 0
    static let maxServiceRequests = 32
    /// Reading back the recorded occupants, which everything else waits for (a transaction the homeserver sends at
    /// start must find the rooms).
    var restoration: Task<Void, Never>?
    /// The private Matrix rooms of ghosts and Matrix members (to route their events), and the other way round.
    var directs: [RoomID: (ghost: UserID, user: UserID)] = [:]
    var directRooms: [String: RoomID] = [:]
    /// When each XMPP user asked to join a room lately (`gateway.max_joins_per_minute`).
    var recentJoins: [JID: [ContinuousClock.Instant]] = [:]

    init(settings: Settings, store: Store, client: MatrixClient, xmpp: any XMPPLink, metrics: GatewayMetrics, logger: Logger,
         importer: MediaImporter? = nil, mediaLinks: MediaLinkSigner? = nil) {
        self.importer = importer
        self.mediaLinks = mediaLinks
        self.settings = settings
        self.store = store
        self.client = client
        self.xmpp = xmpp
        self.metrics = metrics
        self.logger = logger
    }

    var componentDomain: String { settings.naming.componentDomain }

    /// Takes back the occupants recorded before a restart (once; later calls wait for the first).
    public func restore() async {
        if restoration == nil { restoration = Task { await restoreNow() } }
        await restoration?.value
    }

    /// Reads the recorded occupants back; their rooms are read again as one of their ghosts.
    private func restoreNow() async {
        guard let records = try? await store.gatewayOccupants(), !records.isEmpty else { return }
        for (room, rows) in Dictionary(grouping: records, by: \.room) {
            guard let address = GatewayRoomAddress(room, componentDomain: componentDomain), let first = rows.first else { continue }
            var occupants: [JID: GatewayRoomMachine.Occupant] = [:]
            for row in rows {
                occupants[row.resource.bare, default: .init(nick: row.nick, ghost: row.ghost, resources: [])].resources.insert(row.resource)
            }
            let (members, topic) = await read(first.matrixRoom, as: first.ghost)
            var machine = makeMachine(address)
            machine.restore(room: first.matrixRoom, occupants: occupants, members: members, topic: topic)
            machines[address.jid] = machine
            byMatrixRoom[first.matrixRoom] = address.jid
        }
        for direct in (try? await store.gatewayDirects()) ?? [] {
            // Answers go to the room its occupant is in now.
            guard let here = machines.first(where: { $0.value.occupants.values.contains { $0.ghost == direct.ghost } })?.key else { continue }
            registerDirect(direct.matrixRoom, ghost: direct.ghost, user: direct.user, room: here)
        }
        // What the homeserver delivered and a crash kept from the XMPP users: handed on now, in order.
        let linked = (try? await store.linkedRooms(among: Set(byMatrixRoom.keys))) ?? Set(byMatrixRoom.keys)
        for (matrixRoom, _) in byMatrixRoom where !linked.contains(matrixRoom) {   // a linked room's rows are its portal's
            guard let entries = try? await store.inbox(matrixRoom), !entries.isEmpty else { continue }
            let (queued, undecodable) = QueuedMatrixEvent.decoding(entries)
            for row in undecodable {
                logger.error("Dropping an undecodable inbox entry", metadata: ["matrix.event.id": row.eventID.rawValue, "matrix.inbox.seq": "\(row.seq)"])
                deleteRow(row.seq)
            }
            matrix(queued, durable: true)
        }
        refreshGauge()
        logger.info("Gateway rooms restored", metadata: ["gateway.rooms": String(machines.count), "gateway.resources": String(records.count)])
    }

    /// A stanza to one of the rooms (or to an address that names none).
    public func xmpp(_ stanza: Stanza) async {
        await restore()
        if case .iq(let iq) = stanza, let to = iq.to, to.localpart == nil, to.domain == componentDomain {
            serve(iq) { await $0.serviceIQ(iq) }
            return
        }
        guard let to = stanza.to, let address = GatewayRoomAddress(to, componentDomain: componentDomain) else {
            refuse(stanza, StanzaError(type: .cancel, condition: .itemNotFound, text: "Not a room: use #alias%server@\(componentDomain)"))
            return
        }
        if case .iq(let iq) = stanza, case .mamQuery(let query)? = iq.payload, iq.to?.resource == nil {
            // Not on the XMPP task's way: a page of timeline takes homeserver round trips.
            let room = address.jid
            serve(iq) { await $0.archiveQuery(iq, query, room: room) }
            return
        }
        if let allowed = settings.gateway.allowedMatrixServers, !allowed.contains(address.alias.server), machines[address.jid] == nil {
            refuse(stanza, StanzaError(type: .cancel, condition: .notAllowed, text: "Rooms of \(address.alias.server) cannot be joined from here"))
            return
        }
        if case .iq(let iq) = stanza, case .discoInfo? = iq.payload, iq.to?.resource == nil, iq.isRequest, machines[address.jid]?.matrixRoom == nil {
            // Nobody is in: whether the room exists is the homeserver's to say (a mistyped address is no room).
            serve(iq) { await $0.describe(address, answering: iq) }
            return
        }
        if machines[address.jid] == nil {
            // Only a join opens a room here; anything else to a room nobody is in is answered by an empty one.
            if case .presence(let presence) = stanza, presence.type == .available,
               machines.count(where: { !$0.value.isEmpty }) >= settings.gateway.maxGatewayRooms {
                refuse(stanza, StanzaError(type: .wait, condition: .resourceConstraint, text: "Too many rooms are open through this gateway"))
                return
            }
            machines[address.jid] = makeMachine(address)
        }
        if case .presence(let presence) = stanza, presence.type == .available, let user = presence.from?.bare,
           machines[address.jid]?.knows(user) != true, !admitJoin(of: user) {
            refuse(stanza, StanzaError(type: .wait, condition: .resourceConstraint, text: "Too many joins: try again in a minute"))
            if machines[address.jid]?.isEmpty == true { machines[address.jid] = nil }
            return
        }
        let input: GatewayRoomMachine.Input = switch stanza {
        case .presence(let presence): .xmppPresence(presence)
        case .message(let message): .xmppMessage(message)
        case .iq(let iq): .xmppIQ(iq)
        }
        enqueue(address.jid, input)
    }

    /// Of `rooms`, the Matrix rooms hosted here now (their events are kept in the durable inbox for them).
    public func hostedRooms(among rooms: Set<RoomID>) async -> Set<RoomID> {
        await restore()
        return rooms.filter { byMatrixRoom[$0] != nil }
    }

    /// Events of a hosted room, as queued in the inbox: each goes to its room's machine, and (when `durable`: the row
    /// is the gateway's) its inbox row is deleted once the stanzas it made are written. A crash before that replays it
    /// at the next start: an XMPP client may then see a message twice, with the same stanza-id (by which clients that
    /// use MAM drop the copy), never not at all.
    func matrix(_ queued: [QueuedMatrixEvent], durable: Bool) {
        for item in queued {
            guard let room = byMatrixRoom[item.event.room] else {
                if durable { deleteRow(item.seq) }
                continue
            }
            if let (ghost, user) = directs[item.event.room] {
                // A private room: only the Matrix member's messages matter (the ghost's are its own echoes).
                guard item.event.sender == user, case .message(_, let body, _) = item.event.content else {
                    if durable { deleteRow(item.seq) }
                    continue
                }
                enqueue(room, .matrixPrivate(from: user, to: ghost, body: body, event: item.event.eventID), consuming: durable ? item.seq : nil)
                continue
            }
            enqueue(room, .matrix(item.event), consuming: durable ? item.seq : nil)
        }
    }

    /// disco#info of a room nobody is in: its description when its alias resolves, else `item-not-found`.
    private func describe(_ address: GatewayRoomAddress, answering iq: IQ) async {
        let exists = (try? await resolve(address)) != nil
        let answer = exists ? iq.result(payload: .discoInfo(makeMachine(address).roomInfo))
            : iq.errorResponse(StanzaError(type: .cancel, condition: .itemNotFound, text: "No Matrix room has this alias"))
        try? await xmpp.send(.iq(answer))
    }

    /// Typing or read receipts in a hosted room (best effort).
    func ephemeral(_ event: MatrixEphemeral, in matrixRoom: RoomID) {
        // A private room's typing and receipts are not the room's.
        guard let room = byMatrixRoom[matrixRoom], directs[matrixRoom] == nil else { return }
        enqueue(room, .matrixEphemeral(event))
    }

    private func deleteRow(_ seq: Int64) {
        let store = self.store
        Task { try? await store.deleteInbox(seq: seq) }
    }

    // MARK: Performing

    /// Counts a new join of `user`; false when it had `gateway.max_joins_per_minute` in the last minute.
    func admitJoin(of user: JID) -> Bool {
        let now = ContinuousClock.now
        var joins = (recentJoins[user] ?? []).filter { now - $0 < .seconds(60) }
        guard joins.count < settings.gateway.maxJoinsPerMinute else { return false }
        joins.append(now)
        recentJoins[user] = joins
        if recentJoins.count > 10_000 { recentJoins = recentJoins.filter { !$0.value.allSatisfy { now - $0 >= .seconds(60) } } }
        return true
    }

    /// Answers a service request off the XMPP task (it takes homeserver round trips), at most
    /// ``maxServiceRequests`` at once: past that, `resource-constraint`.
    private func serve(_ iq: IQ, _ work: @escaping @Sendable (isolated GatewayRooms) async -> Void) {
        guard serviceRequests < Self.maxServiceRequests else {
            refuse(.iq(iq), StanzaError(type: .wait, condition: .resourceConstraint, text: "Too many requests at once: try again"))
            return
        }
        serviceRequests += 1
        Task {
            await work(self)
            self.serviceRequests -= 1
        }
    }

    /// The room's machine as it is now (to read).
    func machineView(_ room: JID) -> GatewayRoomMachine? { machines[room] }

    func makeMachine(_ address: GatewayRoomAddress) -> GatewayRoomMachine {
        let namespace = settings.namespace
        return GatewayRoomMachine(address: address, naming: settings.naming, bot: namespace.botUserID,
                                  ghostOf: { namespace.userID(for: $0.bare.description) }, isGhost: { namespace.isGhost($0) },
                                  mediaLinks: mediaLinks)
    }

    /// Queues `input` behind the room's earlier ones; `consuming`: the inbox row deleted once it is handled.
    func enqueue(_ room: JID, _ input: GatewayRoomMachine.Input, consuming seq: Int64? = nil) {
        let previous = tails[room]
        tailCount += 1
        let number = tailCount
        let task = Task { [self] in
            await previous?.value
            await process(room, input)
            if let seq {
                do {
                    try await store.deleteInbox(seq: seq)
                } catch {
                    logger.warning("Gateway inbox row not deleted (it is handled again at the next start)", metadata: ["error": "\(error)"])
                }
            }
            finished(room, number)
        }
        tails[room] = task
        tailNumbers[room] = number
    }

    /// Forgets a room's queue once its last input is handled (addresses nobody uses must not pile up).
    private func finished(_ room: JID, _ number: Int) {
        guard tailNumbers[room] == number else { return }
        tails[room] = nil
        tailNumbers[room] = nil
    }

    func process(_ room: JID, _ input: GatewayRoomMachine.Input) async {
        // A join queued behind the leave that emptied (and dropped) the room opens it again.
        guard var machine = machines[room] ?? GatewayRoomAddress(room, componentDomain: componentDomain).map(makeMachine) else { return }
        let actions = machine.handle(input)
        machines[room] = machine
        for action in actions { await perform(action, room: room) }
        if machines[room]?.isEmpty == true {
            for (matrixRoom, hosted) in byMatrixRoom where hosted == room {
                byMatrixRoom[matrixRoom] = nil
                if let (ghost, user) = directs.removeValue(forKey: matrixRoom) { directRooms["\(ghost) \(user)"] = nil }
            }
            machines[room] = nil
            refreshGauge()
        }
    }

    private func perform(_ action: GatewayRoomMachine.Action, room: JID) async {
        switch action {
        case .send(let stanza):
            do {
                try await xmpp.send(stanza)
            } catch {
                logger.debug("Gateway stanza not sent", metadata: ["xmpp.room": room.description, "error": "\(error)"])
            }
        case .joinMatrix(let user, let ghost, let nick):
            await process(room, await joinMatrix(room, user: user, ghost: ghost, nick: nick))
        case .leaveMatrix(let ghost, let matrixRoom):
            do {
                try await client.leave(matrixRoom, as: ghost, reason: "Left from XMPP")
            } catch {
                logger.warning("Gateway ghost could not leave", metadata: ["matrix.room": matrixRoom.rawValue, "error": error.message])
            }
        case .sendMatrix(let from, let ghost, let matrixRoom, let message, let outgoing):
            await sendMatrix(room, from: from, ghost: ghost, matrixRoom: matrixRoom, message: message, outgoing)
        case .readHistory(let resource, let ghost, let matrixRoom, let wanted):
            await process(room, .historyRead(resource: resource, history: await history(of: matrixRoom, as: ghost), wanted: wanted))
        case .sendDirect(let from, let ghost, let user, let message):
            await sendDirect(room, from: from, ghost: ghost, to: user, message: message)
        case .typing(let ghost, let matrixRoom, let on):
            _ = try? await client.setTyping(on, in: matrixRoom, for: ghost)
        case .readReceipt(let ghost, let matrixRoom, let event):
            _ = try? await client.sendReadReceipt(for: event, in: matrixRoom, as: ghost)
        case .occupantsChanged:
            await persist(room)
        }
    }

    func persist(_ room: JID) async {
        let machine = machines[room]
        let records = machine.map { machine in
            machine.occupants.values.flatMap { occupant in
                occupant.resources.compactMap { resource in
                    machine.matrixRoom.map { GatewayOccupantRecord(room: room, resource: resource, nick: occupant.nick, ghost: occupant.ghost, matrixRoom: $0) }
                }
            }
        } ?? []
        do {
            try await store.replaceGatewayOccupants(of: room, with: records)
        } catch {
            logger.warning("Gateway occupants not recorded", metadata: ["xmpp.room": room.description, "error": "\(error)"])
        }
        refreshGauge()
    }

    func refreshGauge() {
        metrics.setGatewayOccupants(machines.values.reduce(0) { $0 + $1.occupants.count })
    }

    /// Answers `stanza` with `error` (requests only; errors and results are never answered).
    private func refuse(_ stanza: Stanza, _ error: StanzaError) {
        let reply: Stanza? = switch stanza {
        case .iq(let iq): iq.isRequest ? .iq(iq.errorResponse(error)) : nil
        case .message(let message): message.type == .error ? nil
            : .message(Message(type: .error, from: message.to, to: message.from, id: message.id, error: error))
        case .presence(let presence): presence.type == .available
            ? .presence(Presence(type: .error, from: presence.to, to: presence.from, error: error)) : nil
        }
        guard let reply else { return }
        let xmpp = self.xmpp
        Task { try? await xmpp.send(reply) }
    }
}
