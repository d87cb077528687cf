import IsthmusCommon

/// Everything a portal handles, from both sides, one at a time in arrival order.
enum PortalEvent: Sendable, Equatable {
    /// Bring the link up: join both sides, catch up, reconcile membership, drain the Matrix inbox.
    case activate
    /// The XMPP link dropped: stop sending until it is back.
    case xmppDisconnected
    /// A message in the MUC (one copy per hosted occupant reaches us; the portal keeps one).
    case xmppMessage(RoomMessage)
    /// A presence in the MUC.
    case xmppPresence(RoomPresence)
    /// A private message from an occupant to a Matrix user's occupant, or a bounce of one of ours (``RoomMessage/error``).
    case xmppPrivateMessage(RoomMessage)
    /// The MUC forwarded a mediated invitation to one of our JIDs (XEP-0045 §7.8.2).
    case xmppInvite(RoomInvite)
    /// Ghosts' power levels are due: the occupants' roles changed since the last time (queued behind the events
    /// already queued, so a burst of presences makes one `m.room.power_levels` change).
    case syncPowerLevels
    /// Events of this room just written to the durable inbox, in order (handled without reading them back).
    case matrixEvents([QueuedMatrixEvent])
    /// Typing or read receipts in the Matrix room (best effort: not stored).
    case matrixEphemeral(MatrixEphemeral)
    /// Typing notices, chat states or markers held back by a throttle are due.
    case flushEphemeral
    /// Try the inbox (from the store) again after an XMPP request timed out (the link itself is up).
    case retryInbox
    /// A Matrix event waited for one of our messages' reflection long enough: drain again (see ``PortalStateMachine/ReceiptWait``).
    case resumeDrain
    /// A homeserver transaction may be missing (a hole in its ids): check the timeline before the next Matrix events.
    case timelineGap
    /// The homeserver may have stranded a transaction with nothing after it: check the timeline now.
    case checkTimeline
    /// The occupant list is complete after a join: ghosts of departed occupants leave.
    case reconcileGhosts
    /// The Matrix room's avatar change ended (queued as an event, not an outcome: the change is no step of the
    /// activation's agenda, which it must not advance).
    case roomAvatarSet(RoomStateMachine.RoomAvatarChange, RoomStateMachine.RoomAvatarOutcome)
    /// Periodic XEP-0410 self-ping: is the bridge's occupant still in the MUC? If not, rejoin and catch up.
    case selfCheck
    /// Unlink: both sides leave, state is forgotten, the link row is deleted. `xmppConnected`: whether the XMPP link
    /// is up as the event is queued (a portal loaded only to unlink was never activated).
    case unlink(xmppConnected: Bool)
}
