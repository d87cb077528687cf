import IsthmusCommon
import IsthmusStore
import Synchronization

/// The bridge's routing table: portals by Matrix room and by MUC, the MUCs a self-service consent handshake holds
/// (there is no portal for them meanwhile; their events go to it), and whether the XMPP link is up.
///
/// Shared by the three places events enter the bridge — the XMPP task, the appservice handler, the control loop —
/// and the self-service desk, so each hands an event to its portal directly, without a hop through another task.
/// Every operation holds the lock only for the lookup and the (non-blocking) enqueue; adding a portal and a
/// connection change are each atomic, so a new portal is activated exactly once.
final class PortalDirectory: Sendable {
    private struct Table {
        var portals: [RoomID: Portal] = [:]
        var byMUC: [JID: Portal] = [:]
        var unlinking: Set<RoomID> = []
        var xmppConnected = false
        /// MUCs a self-service consent handshake is using (no portal meanwhile), and where their events go.
        var consents: [JID: @Sendable (XMPPLinkEvent) -> Void] = [:]
    }

    private let table = Mutex(Table())

    /// The portal of a Matrix room.
    func portal(for room: RoomID) -> Portal? {
        table.withLock { $0.portals[room] }
    }

    /// Every portal.
    var all: [Portal] {
        table.withLock { Array($0.portals.values) }
    }

    /// Adds a portal for a newly loaded link and queues what it must do first: unlink, or activate when the XMPP
    /// link is up (else the coming connection activates it).
    func add(_ portal: Portal) {
        table.withLock { table in
            let room = portal.link.matrixRoom
            table.portals[room] = portal
            table.byMUC[portal.link.muc.bare] = portal
            if portal.link.unlinking {
                table.unlinking.insert(room)
                portal.enqueue(.unlink(xmppConnected: table.xmppConnected))
            } else if table.xmppConnected {
                portal.enqueue(.activate)
            }
        }
    }

    /// Asks a loaded portal to unlink (once).
    func unlink(_ room: RoomID) {
        table.withLock { table in
            guard let portal = table.portals[room], !table.unlinking.contains(room) else { return }
            table.unlinking.insert(room)
            portal.enqueue(.unlink(xmppConnected: table.xmppConnected))
        }
    }

    /// Forgets an unlinked portal.
    func remove(_ room: RoomID) {
        table.withLock { table in
            guard let portal = table.portals.removeValue(forKey: room) else { return }
            // A moved link's new portal may hold the MUC already.
            if table.byMUC[portal.link.muc.bare] === portal { table.byMUC[portal.link.muc.bare] = nil }
            table.unlinking.remove(room)
        }
    }

    /// Hands an XMPP event to the portal of its room; connection changes go to every portal. A portal that takes the
    /// event takes its `receipt` too; the receipt is returned when nothing took it (the caller gives it then).
    @discardableResult
    func route(_ event: XMPPLinkEvent, receipt: XMPPReceipt? = nil, logger: Logger) -> XMPPReceipt? {
        switch event {
        case .connected(let reconnected):
            logger.info("XMPP link up", metadata: ["xmpp.reconnected": "\(reconnected)"])
            table.withLock { table in
                table.xmppConnected = true
                for portal in table.portals.values { portal.enqueue(.activate) }
            }
        case .disconnected(let reason):
            logger.warning("XMPP link down", metadata: ["reason": reason])
            let consents = table.withLock { table in
                table.xmppConnected = false
                for portal in table.portals.values { portal.enqueue(.xmppDisconnected) }
                return Array(table.consents.values)
            }
            for consent in consents { consent(event) }
        case .message(let message):
            return deliver(.xmppMessage(message), of: event, room: message.room, receipt: receipt)
        case .presence(let presence):
            return deliver(.xmppPresence(presence), of: event, room: presence.room, receipt: receipt)
        case .privateMessage(let message):
            return deliver(.xmppPrivateMessage(message), of: event, room: message.room, receipt: receipt)
        case .session, .subscriptionRequest, .gateway:
            break   // the rooms act on `connected`, which follows; subscriptions are the account's, not a room's; the
                    // rooms the component hosts are the gateway's (``XMPPEventRouter``)
        case .invite(let invite):
            if let portal = table.withLock({ $0.byMUC[invite.room.bare] }) {
                portal.enqueue(.xmppInvite(invite), receipt: receipt)
                return nil
            }
            logger.debug("Invitation from a room that is not linked ignored", metadata: ["xmpp.muc": invite.room.description])
        }
        return receipt
    }

    /// Queues a room's event at its portal (with the receipt), or hands it to the consent handshake holding the room
    /// (which keeps nothing durable: the receipt comes back).
    private func deliver(_ portalEvent: PortalEvent, of event: XMPPLinkEvent, room: JID, receipt: XMPPReceipt?) -> XMPPReceipt? {
        let (portal, consent) = table.withLock { ($0.byMUC[room.bare], $0.consents[room.bare]) }
        if let portal {
            portal.enqueue(portalEvent, receipt: receipt)
            return nil
        }
        consent?(event)
        return receipt
    }

    /// Reserves `muc` for a self-service consent handshake: its room events go to `route` until ``release(_:)``, and
    /// the bridge loads no portal for it meanwhile. False when a portal or another handshake has it.
    func reserve(_ muc: JID, route: @escaping @Sendable (XMPPLinkEvent) -> Void) -> Bool {
        table.withLock { table in
            guard table.byMUC[muc.bare] == nil, table.consents[muc.bare] == nil else { return false }
            table.consents[muc.bare] = route
            return true
        }
    }

    /// Ends a reservation made by ``reserve(_:route:)``.
    func release(_ muc: JID) {
        _ = table.withLock { $0.consents.removeValue(forKey: muc.bare) }
    }

    /// Whether the XMPP link is up.
    var isXMPPConnected: Bool {
        table.withLock { $0.xmppConnected }
    }

    /// Whether a consent handshake holds `muc`.
    func isReserved(_ muc: JID) -> Bool {
        table.withLock { $0.consents[muc.bare] != nil }
    }
}
