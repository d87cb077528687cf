import IsthmusCommon

/// Everything a portal handles, from both sides, one at a time in arrival order.
enum PortalEvent: Sendable {
    /// Bring the link up: join both sides, catch up, reconcile membership, drain the Matrix inbox.
    case activate
    /// The XMPP link dropped: stop sending until it is back.
    case xmppDisconnected
    /// A message in the MUC (one copy per hosted occupant reaches us; the portal keeps one).
    case xmppMessage(RoomMessage)
    /// A presence in the MUC.
    case xmppPresence(RoomPresence)
    /// New events for this room are in the durable Matrix inbox.
    case matrixInbox
    /// Try the inbox again after an XMPP request timed out (the link itself is up).
    case retryInbox
    /// The homeserver will retry a transaction the bridge failed: check the Matrix timeline before each drain for a while.
    case checkTimeline
    /// The occupant list is complete after a join: ghosts of departed occupants leave.
    case reconcileGhosts
    /// Periodic XEP-0410 self-ping: is the bridge's occupant still in the MUC? If not, rejoin and catch up.
    case selfCheck
    /// Unlink: both sides leave, state is forgotten, the link row is deleted.
    case unlink
}
