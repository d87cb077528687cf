import IsthmusCommon
import IsthmusStore

/// The bridge loop's routing table: portals by Matrix room and by MUC. A value owned by ``Bridge/run(xmppEvents:)``.
struct PortalRouter {
    var portals: [RoomID: Portal] = [:]
    var byMUC: [JID: Portal] = [:]
    var unlinking: Set<RoomID> = []
    var xmppConnected = false

    mutating func add(_ portal: Portal) {
        portals[portal.link.matrixRoom] = portal
        byMUC[portal.link.muc.bare] = portal
    }

    mutating func remove(_ room: RoomID) {
        guard let portal = portals.removeValue(forKey: room) else { return }
        byMUC[portal.link.muc.bare] = nil
        unlinking.remove(room)
    }

    /// Hands an XMPP event to the portal of its room (connection changes go to every portal).
    mutating func route(_ event: XMPPLinkEvent, logger: Logger) {
        switch event {
        case .connected(let reconnected):
            xmppConnected = true
            logger.info("XMPP link up", metadata: ["xmpp.reconnected": "\(reconnected)"])
            for portal in portals.values { portal.enqueue(.activate) }
        case .disconnected(let reason):
            xmppConnected = false
            logger.warning("XMPP link down", metadata: ["reason": reason])
            for portal in portals.values { portal.enqueue(.xmppDisconnected) }
        case .message(let message):
            byMUC[message.room.bare]?.enqueue(.xmppMessage(message))
        case .presence(let presence):
            byMUC[presence.room.bare]?.enqueue(.xmppPresence(presence))
        }
    }
}
