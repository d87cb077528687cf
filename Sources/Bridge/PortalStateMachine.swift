import IsthmusCommon

/// A portal's control state as a value: whether each side is up, when Matrix events may go out, when they are read
/// from the store rather than taken as handed in, when the room's timeline is checked first, and when a paused inbox
/// is retried. Events in, actions out; no I/O, time passed in. The ``Portal`` actor performs the actions in order and
/// feeds their outcomes back (postgres-nio's connection state machine is the model).
///
/// What is decided here: the order of a room's work (activation before Matrix events; the timeline check before the
/// events behind a suspected hole; resends before newer messages), exactly-once hand-over of queued Matrix events
/// (each inbox row is handled once whether it was handed in or read back), pausing while XMPP is unavailable, and
/// ending after unlink. The translation of single messages and membership still lives in the actor's extensions.
struct PortalStateMachine: Sendable {
    /// What the portal must do, in order.
    enum Action: Sendable, Equatable {
        /// Join both sides, catch up from the archive, bring puppets in line, resend unreceipted messages; then report
        /// ``Input/activated(botJoined:resent:)``.
        case activate
        /// Record that the XMPP link is down (status, puppets no longer joined).
        case recordDisconnected
        /// Bridge one MUC message (or take it as a receipt / delivery error).
        case handleXMPPMessage(RoomMessage)
        /// Handle one MUC presence.
        case handleXMPPPresence(RoomPresence)
        /// Read the room's inbox from the store (checking the Matrix timeline first when asked) and handle it in
        /// order; then report ``Input/drained(_:)``.
        case drainStore(checkTimeline: Bool)
        /// Handle these queued events, as handed in; then report ``Input/drained(_:)``.
        case drain([QueuedMatrixEvent])
        /// Resend unreceipted messages; then report ``Input/resent(_:)``.
        case resendUndelivered
        /// Deliver ``Input/retryInbox`` at this time.
        case scheduleInboxRetry(at: ContinuousClock.Instant)
        /// Queue ``PortalEvent/reconcileGhosts`` behind the events already queued: the occupants' presences that arrived
        /// during the join must be handled before ghosts of departed occupants are told apart.
        case queueGhostReconciliation
        /// Ghosts of occupants that are gone leave.
        case reconcileGhosts
        /// Bring puppets in line with the Matrix room's members.
        case syncPuppets
        /// XEP-0410 self-ping; then report ``Input/selfPinged(joined:)``.
        case selfPing
        /// Record the link as active.
        case markActive
        /// Leave both rooms and forget the link.
        case unlink
    }

    /// What happened.
    enum Input: Sendable, Equatable {
        case event(PortalEvent)
        /// The activation finished: whether the bridge's occupant is in the MUC, and whether unreceipted messages all
        /// went out (false: the XMPP side was unavailable).
        case activated(botJoined: Bool, resent: Bool)
        /// A drain finished.
        case drained(DrainOutcome)
        /// A resend finished.
        case resent(Bool)
        case selfPinged(joined: Bool)
        /// The bridge's own occupant left the MUC; `rejoin` unless it was kicked or banned.
        case botLeft(rejoin: Bool)
    }

    /// How a drain ended.
    enum DrainOutcome: Sendable, Equatable {
        /// Every event was handled; the highest inbox row seen.
        case complete(highestSeq: Int64)
        /// The XMPP side was unavailable: the rest waits. `retry` when it was only slow (a timeout).
        case blocked(retry: Bool)
    }

    /// How long a paused inbox waits after an XMPP request timed out.
    let inboxRetryDelay: Duration

    private(set) var xmppConnected = false
    private(set) var botJoined = false
    /// Matrix events wait: the XMPP side was unavailable.
    private(set) var inboxBlocked = false
    /// The next Matrix work reads the store (events were handed in while they could not be handled, or nothing is
    /// known yet).
    private(set) var inboxNeedsReload = true
    /// The next drain checks the Matrix timeline first.
    private(set) var timelineCheckPending = false
    /// Inbox rows up to here were handled or read: a handed-in copy of one of them is not handled again.
    private(set) var highestSeq: Int64 = 0
    /// A self-check waits for its drain.
    private var selfCheckDraining = false
    private(set) var closed = false

    init(inboxRetryDelay: Duration = .seconds(5)) {
        self.inboxRetryDelay = inboxRetryDelay
    }

    /// Whether Matrix events can go out now.
    private var canSend: Bool { xmppConnected && botJoined && !inboxBlocked }

    /// Takes one input; returns what to do, in order.
    mutating func receive(_ input: Input, now: ContinuousClock.Instant) -> [Action] {
        guard !closed else { return [] }
        switch input {
        case .event(let event):
            return receive(event, now: now)
        case .activated(let joined, let resent):
            botJoined = joined
            guard joined else { return [] }
            timelineCheckPending = true
            inboxNeedsReload = true
            if resent {
                inboxBlocked = false
                return [.queueGhostReconciliation, drainStore(), .markActive]
            }
            inboxBlocked = true
            return [.queueGhostReconciliation, .scheduleInboxRetry(at: now + inboxRetryDelay), .markActive]
        case .drained(let outcome):
            let selfCheck = selfCheckDraining
            selfCheckDraining = false
            switch outcome {
            case .complete(let seq):
                highestSeq = max(highestSeq, seq)
                inboxNeedsReload = false
                return selfCheck ? [.syncPuppets, .selfPing] : []
            case .blocked(let retry):
                inboxBlocked = true
                inboxNeedsReload = true
                return (retry ? [.scheduleInboxRetry(at: now + inboxRetryDelay)] : []) + (selfCheck ? [.selfPing] : [])
            }
        case .resent(let ok):
            guard ok else {
                inboxBlocked = true
                return [.scheduleInboxRetry(at: now + inboxRetryDelay)]
            }
            inboxBlocked = false
            return [drainStore()]
        case .selfPinged(let joined):
            guard !joined, botJoined else { return [] }
            botJoined = false
            return [.activate]
        case .botLeft(let rejoin):
            botJoined = false
            return rejoin ? [.activate] : []
        }
    }

    private mutating func receive(_ event: PortalEvent, now: ContinuousClock.Instant) -> [Action] {
        switch event {
        case .activate:
            xmppConnected = true
            return [.activate]
        case .xmppDisconnected:
            xmppConnected = false
            botJoined = false
            return [.recordDisconnected]
        case .xmppMessage(let message):
            return [.handleXMPPMessage(message)]
        case .xmppPresence(let presence):
            return [.handleXMPPPresence(presence)]
        case .matrixEvents(let queued):
            let fresh = queued.filter { $0.seq > highestSeq }
            guard !fresh.isEmpty else { return [] }
            guard canSend else {
                inboxNeedsReload = true
                return []
            }
            if inboxNeedsReload || timelineCheckPending { return [drainStore()] }
            highestSeq = max(highestSeq, fresh.map(\.seq).max() ?? 0)
            return [.drain(fresh)]
        case .retryInbox:
            guard xmppConnected, botJoined, inboxBlocked else { return [] }
            return [.resendUndelivered]
        case .timelineGap:
            timelineCheckPending = true
            return []
        case .reconcileGhosts:
            return botJoined ? [.reconcileGhosts] : []
        case .checkTimeline:
            timelineCheckPending = true
            return canSend ? [drainStore()] : []
        case .selfCheck:
            guard xmppConnected, botJoined else { return [] }
            inboxBlocked = false
            timelineCheckPending = true
            selfCheckDraining = true
            return [drainStore()]
        case .unlink(let connected):
            xmppConnected = connected
            closed = true
            return [.unlink]
        }
    }

    /// A drain from the store, taking a pending timeline check with it.
    private mutating func drainStore() -> Action {
        defer { timelineCheckPending = false }
        return .drainStore(checkTimeline: timelineCheckPending)
    }
}
