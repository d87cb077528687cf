import Foundation
import IsthmusCommon
import IsthmusStore

/// One linked pair of rooms: a Matrix room and a MUC, bridged both ways.
///
/// Every event of the pair — from the MUC, from the homeserver, and lifecycle commands — goes through one
/// `AsyncStream` and is handled to completion before the next (per-room serial order). Portals of different
/// links run in parallel. Only ``run()`` touches the state; ``enqueue(_:)`` may be called from anywhere.
///
/// The order of the room's work is decided by ``PortalStateMachine``: ``run()`` feeds it each event and performs the
/// actions it returns (feeding their outcomes back), and nothing else.
actor Portal {
    /// The link this portal bridges.
    let link: RoomLink
    let context: BridgeContext
    var logger: Logger

    private let events: AsyncStream<PortalEvent>
    private let continuation: AsyncStream<PortalEvent>.Continuation
    /// The room's control state.
    private(set) var machine = PortalStateMachine()
    /// The pending inbox retry (owned here: replaced by a newer one, cancelled when the portal ends).
    private var retryTimer: Task<Void, Never>?

    /// The nick the bridge's own occupant holds.
    var botNick: String
    /// Current occupants of the MUC other than ours, by nick.
    var occupants: [String: Occupant] = [:]
    /// Matrix users' occupants, by Matrix user.
    var puppets: [UserID: Puppet] = [:]
    /// Matrix members' current displaynames (per room), as last seen.
    var displaynames: [UserID: String] = [:]
    /// This room's ghosts as stored (loaded once, then kept in step with every write).
    var ghostCache: [UserID: RoomGhost]?

    /// Whether the XMPP link is up.
    var xmppConnected: Bool { machine.xmppConnected }
    /// Whether the bridge's own occupant is in the MUC.
    var botJoined: Bool { machine.botJoined }

    /// A MUC occupant that is not ours, and the ghost standing for it on Matrix.
    struct Occupant: Sendable {
        var nick: String
        var occupantID: OccupantID?
        var realJID: JID?
        var ghost: UserID?
    }

    init(link: RoomLink, context: BridgeContext) {
        self.link = link
        self.context = context
        self.logger = context.logger.with(label: "bridge.portal").with([
            "matrix.room.id": link.matrixRoom.rawValue, "xmpp.muc": link.muc.description,
        ])
        self.botNick = context.naming.botNick
        (events, continuation) = AsyncStream.makeStream(of: PortalEvent.self)
    }

    /// Queues an event for this portal. Safe from any context; order of calls is order of handling.
    nonisolated func enqueue(_ event: PortalEvent) {
        continuation.yield(event)
    }

    /// Ends the portal's loop after the events already queued (graceful shutdown: nobody leaves any room).
    nonisolated func finish() {
        continuation.finish()
    }

    /// Handles events until ``finish()`` or unlink. Returns when the loop ends.
    func run() async {
        for await event in events {
            await feed(.event(event))
            if machine.closed { break }
        }
        continuation.finish()
        retryTimer?.cancel()
    }

    /// Feeds the machine and performs what it asks, outcomes first (each outcome's actions run before the rest).
    private func feed(_ input: PortalStateMachine.Input) async {
        var actions = machine.receive(input, now: context.clock.now())
        while !actions.isEmpty {
            let action = actions.removeFirst()
            if let outcome = await perform(action) {
                actions = machine.receive(outcome, now: context.clock.now()) + actions
            }
        }
    }

    /// Performs one action; returns its outcome when the machine waits for one.
    private func perform(_ action: PortalStateMachine.Action) async -> PortalStateMachine.Input? {
        switch action {
        case .activate:
            return await activate()
        case .recordDisconnected:
            for user in puppets.keys { puppets[user]?.joined = false }
            await setStatus(.pending, detail: "waiting for the XMPP server")
        case .handleXMPPMessage(let message):
            await handleXMPPMessage(message)
        case .handleXMPPPresence(let presence):
            return await handleXMPPPresence(presence)
        case .drainStore(let checkTimeline):
            return .drained(await drainStore(checkTimeline: checkTimeline))
        case .drain(let queued):
            return .drained(await drain(queued))
        case .resendUndelivered:
            return .resent(await resendUndelivered())
        case .scheduleInboxRetry(let instant):
            retryTimer?.cancel()
            let delay = instant - context.clock.now()
            retryTimer = Task { [self] in
                guard (try? await Task.sleep(for: delay)) != nil else { return }
                enqueue(.retryInbox)
            }
        case .queueGhostReconciliation:
            enqueue(.reconcileGhosts)
        case .reconcileGhosts:
            await reconcileGhosts()
        case .syncPuppets:
            await syncPuppetsWithMatrixMembers()
        case .selfPing:
            return await selfPing()
        case .markActive:
            await setStatus(.active)
        case .unlink:
            await unlink()
        }
        return nil
    }

    /// Records the link's status for `isthmus links`.
    func setStatus(_ status: RoomLink.Status, detail: String? = nil) async {
        do {
            try await context.store.updateRoomLinkStatus(link.matrixRoom, status: status, detail: detail)
        } catch {
            logger.error("Could not record link status", metadata: ["error": "\(error)"])
        }
        context.notify(.status(link.matrixRoom, status))
    }
}
