import Foundation
import IsthmusCommon
import IsthmusStore

/// One linked pair of rooms: a Matrix room and a MUC, bridged both ways.
///
/// Every event of the pair — from the MUC, from the homeserver, and lifecycle commands — goes through one
/// `AsyncStream` and is handled to completion before the next (per-room serial order). Portals of different
/// links run in parallel. Only ``run()`` touches the state; ``enqueue(_:)`` may be called from anywhere.
actor Portal {
    /// The link this portal bridges.
    let link: RoomLink
    let context: BridgeContext
    var logger: Logger

    private let events: AsyncStream<PortalEvent>
    private let continuation: AsyncStream<PortalEvent>.Continuation

    /// Whether the XMPP link is up (set by the bridge before it enqueues `.activate`).
    var xmppConnected = false
    /// Whether the bridge's own occupant is in the MUC.
    var botJoined = false
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
    /// Whether inbox draining stopped because the XMPP side was down.
    var inboxBlocked = false
    /// Until when every drain first checks the Matrix timeline for messages never pushed (set by activation).
    var timelineCheckUntil: ContinuousClock.Instant?
    /// Set once unlinked: later events are ignored.
    var closed = false

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

    /// Sets whether the XMPP link is up without activating (for an unlink right after start).
    func markConnected(_ connected: Bool) {
        xmppConnected = connected
    }

    /// Handles events until ``finish()`` or unlink. Returns when the loop ends.
    func run() async {
        for await event in events {
            if closed { continue }
            await handle(event)
        }
    }

    private func handle(_ event: PortalEvent) async {
        switch event {
        case .activate:
            xmppConnected = true
            await activate()
        case .xmppDisconnected:
            xmppConnected = false
            botJoined = false
            for user in puppets.keys { puppets[user]?.joined = false }
            await setStatus(.pending, detail: "waiting for the XMPP server")
        case .xmppMessage(let message):
            await handleXMPPMessage(message)
        case .xmppPresence(let presence):
            await handleXMPPPresence(presence)
        case .matrixInbox:
            await drainInbox()
        case .checkTimeline:
            timelineCheckUntil = .now + timelineCheckWindow
            await drainInbox(checkTimeline: true)
        case .retryInbox:
            guard xmppConnected, botJoined else { return }
            if await resendUndelivered() {
                inboxBlocked = false
                await drainInbox()
            } else {
                blockInbox(retry: true)
            }
        case .reconcileGhosts:
            await reconcileGhosts()
        case .selfCheck:
            await selfCheck()
        case .unlink:
            await unlink()
            closed = true
            continuation.finish()
        }
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
