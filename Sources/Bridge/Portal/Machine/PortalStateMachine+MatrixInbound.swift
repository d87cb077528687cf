import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The Matrix room's events, in inbox order: messages to the MUC exactly once from their senders' puppets, and
/// memberships moving puppets. Puppets get their nicks here (conflicts → deterministic alternatives).
extension PortalStateMachine {
    /// One queued Matrix event.
    mutating func matrixEvent(_ queued: QueuedMatrixEvent) -> [Action] {
        let event = queued.event
        switch event.content {
        case .message, .reaction, .redaction:
            guard isBridgedMatrixUser(event.sender) else { return [.dequeue(seq: queued.seq)] }
            if case .message(let msgtype, let body, let details) = event.content {
                // `!isthmus` commands are for the bridge (SelfServiceDesk), never for the MUC.
                if BridgeCommand.parse(msgtype: msgtype, body: body) != nil { return [.dequeue(seq: queued.seq)] }
                if details?.replyTo == nil, details?.replaces == nil, !(configuration.uploadsMedia && details?.media != nil) {
                    return matrixEvent(queued, targets: MatrixTargets())
                }
            }
            return [.resolveMatrixTargets(queued)]
        case .member(let membership, let displayname, let reason):
            if membership == .invite, let ghost = event.stateKey.flatMap(UserID.init), configuration.isGhost(ghost),
               isBridgedMatrixUser(event.sender) {
                return invites(.ghostInvited(.init(inviter: event.sender, ghost: ghost, reason: reason, seq: queued.seq, eventID: event.eventID)))
            }
            guard let user = event.stateKey.flatMap(UserID.init), isBridgedMatrixUser(user) else { return [.dequeue(seq: queued.seq)] }
            switch membership {
            case .join:
                displaynames[user] = displayname.flatMap { $0.isEmpty ? nil : $0 }
                // Before the puppet joins: its join presence then carries the avatar's hash.
                return avatars(.matrixMember(user, mxc: event.avatarURL, present: true))
                    + ensurePuppet(user, then: .membership(eventID: event.eventID, seq: queued.seq))
            case .leave, .ban:
                var actions: [Action] = []
                if let puppet = puppets[user] {
                    var status: String?
                    if event.sender != user {
                        let who = displaynames[event.sender] ?? event.sender.localpart
                        status = "\(membership == .ban ? "Banned" : "Kicked") on Matrix by \(who)" + (reason.map { ": \($0)" } ?? "")
                    }
                    actions = removePuppet(puppet, status: status)
                    displaynames[user] = nil
                }
                actions += avatars(.matrixMember(user, mxc: nil, present: false))
                return actions + [.dequeue(seq: queued.seq)]
            default:
                return [.dequeue(seq: queued.seq)]
            }
        case .topic(let text):
            return roomState(.matrixTopic(queued, text: text))
        case .tombstone(let replacement, _):
            return roomState(.tombstone(queued, replacement: replacement))
        case .powerLevels(let users, let usersDefault):
            return roles(.matrixPowerLevelsChanged(users: users, usersDefault: usersDefault)) + [.dequeue(seq: queued.seq)]
        case .encrypted, .encryptionEnabled:
            return encryptedEvent(queued)
        }
    }

    /// An event the bridge cannot read: the room is told (see ``EncryptedEventNotices``), the event is not bridged.
    private mutating func encryptedEvent(_ queued: QueuedMatrixEvent) -> [Action] {
        guard isBridgedMatrixUser(queued.event.sender),
              let notice = encryptedNotices.take(queued.event, in: .linkedRoom, now: now) else { return [.dequeue(seq: queued.seq)] }
        let log = LogEntry(level: .info, message: "An encrypted Matrix event was not bridged; the room is told",
                           metadata: ["matrix.event.id": queued.event.eventID.rawValue, "matrix.encrypted.held_back": "\(notice.heldBack)"])
        return [.log(log), .postNotice(notice.text, subject: notice.subject), .dequeue(seq: queued.seq)]
    }

    /// The message is mapped (its inbox row consumed in the same commit): from now on the map entry gets it out.
    mutating func mappingInserted(_ delivery: XMPPDelivery, inserted: Bool?) -> [Action] {
        switch inserted {
        case nil:
            // The store failed: the row is still queued; try again after a pause.
            return drainBlocked(retry: true)
        case false?:
            return []   // mapped already: bridged, or being resent from the map
        case true?:
            return ensurePuppet(delivery.user, then: .send(delivery))
        }
    }

    // MARK: Puppets

    /// Makes sure `user` has an occupant in the MUC, then goes on with `followUp`. The nick is the user's displayname
    /// (else the localpart); on conflict a deterministic alternative (`Name (Matrix)`, then numbered) is kept until
    /// the displayname changes. Never sends under someone else's nick: the MUC assigns nicks uniquely.
    mutating func ensurePuppet(_ user: UserID, then followUp: PuppetFollowUp) -> [Action] {
        let displayname = displaynames[user] ?? user.localpart
        if let puppet = puppets[user], puppet.joined, puppet.displayname == displayname { return puppetReady(puppet, followUp) }
        guard xmppConnected else { return puppetFailed(user, followUp, .notConnected) }
        guard let occupant = configuration.naming.puppetJID(for: user) else {
            return puppetFailed(user, followUp, .other("no JID for \(user)"))
        }
        let previous = puppets[user]
        // Keep the alternative nick we already hold when the displayname did not change (no churn after restarts).
        let first = previous?.displayname == displayname ? attemptIndex(of: previous?.nick, for: displayname) : 0
        return tryPuppetNick(PuppetJob(user: user, displayname: displayname, occupant: occupant, firstAttempt: first,
                                       attempt: first, then: followUp))
    }

    private func tryPuppetNick(_ job: PuppetJob) -> [Action] {
        let nick = configuration.naming.nick(for: job.displayname, attempt: job.attempt)
        let previous = puppets[job.user]
        let change = previous.map { $0.joined && $0.nick != nick } ?? false
        return [.joinMUC(MUCJoin(nick: nick, occupant: job.occupant, change: change, purpose: .puppet(job)))]
    }

    private func attemptIndex(of nick: String?, for displayname: String) -> Int {
        guard let nick else { return 0 }
        for attempt in 0..<20 where configuration.naming.nick(for: displayname, attempt: attempt) == nick { return attempt }
        return 0
    }

    mutating func puppetJoinOutcome(_ job: PuppetJob, _ result: JoinOutcome) -> [Action] {
        switch result {
        case .joined(let presence):
            let given = presence.nick
            let puppet = Puppet(room: configuration.room, user: job.user, occupant: job.occupant, nick: given,
                                displayname: job.displayname, joined: true)
            puppets[job.user] = puppet
            return roles(.puppetJoined(job.user)) + [.savePuppet(puppet),
                    .log(LogEntry(level: .debug, message: "Puppet joined", metadata: ["matrix.user.id": job.user.rawValue, "xmpp.nick": given]))]
                + puppetReady(puppet, job.then)
        case .nickConflict:
            let tried = configuration.naming.nick(for: job.displayname, attempt: job.attempt)
            let log = Action.log(LogEntry(level: .info, message: "Nick taken; trying an alternative",
                                          metadata: ["matrix.user.id": job.user.rawValue, "xmpp.nick": tried]))
            guard job.attempt + 1 < job.firstAttempt + 10 else {
                return [log] + puppetFailed(job.user, job.then, .other("every nick tried for \(job.user) is taken"))
            }
            var next = job
            next.attempt += 1
            return [log] + tryPuppetNick(next)
        case .notAllowed(let error):
            return puppetFailed(job.user, job.then, .refused(StanzaErrorInfo(condition: error.condition, text: error.text)))
        }
    }

    /// The puppet is in the MUC: what waited for it goes on.
    private mutating func puppetReady(_ puppet: Puppet, _ followUp: PuppetFollowUp) -> [Action] {
        switch followUp {
        case .membership(_, let seq):
            return [.dequeue(seq: seq)]
        case .sync:
            return []
        case .send(let delivery):
            return [.sendGroupchat(delivery, from: puppet.occupant)]
        case .subject(let change):
            return roomState(.puppetReady(change))
        case .invite(let invite):
            return invites(.puppetReady(invite, occupant: puppet.occupant))
        }
    }

    /// The puppet could not be made ready (or a message could not go out): a wait for the XMPP side, or a report.
    mutating func puppetFailed(_ user: UserID, _ followUp: PuppetFollowUp, _ failure: XMPPFailure) -> [Action] {
        let name = displaynames[user] ?? user.localpart
        switch followUp {
        case .membership(let eventID, let seq):
            if failure.isUnavailable { return unavailableDuringDrain(failure) }
            return [.log(LogEntry(level: .warning, message: "Puppet could not join", metadata: ["matrix.user.id": user.rawValue, "error": "\(failure)"])),
                    .postNotice("⚠️ \(name) could not join the XMPP room (\(failure.description)).", subject: "join-failed:\(eventID.rawValue)"),
                    .dequeue(seq: seq)]
        case .sync:
            let log = Action.log(LogEntry(level: .warning, message: "Puppet could not join", metadata: ["matrix.user.id": user.rawValue, "error": "\(failure)"]))
            if failure == .notConnected {
                agenda.removeAll { step in
                    if case .ensurePuppet(_, .sync) = step { return true }
                    if case .removeDepartedPuppets = step { return true }
                    return false
                }
            }
            return [log]
        case .send(let delivery):
            return sendFailed(delivery, failure)
        case .subject(let change):
            return roomState(.puppetFailed(change, failure))
        case .invite(let invite):
            if failure.isUnavailable { return unavailableDuringDrain(failure) }
            return [.log(LogEntry(level: .warning, message: "Puppet could not join to send an invitation",
                                  metadata: ["matrix.user.id": user.rawValue, "error": "\(failure)"])),
                    .dequeue(seq: invite.seq)]
        }
    }

    /// The XMPP side was unavailable while a Matrix event was being handled: the drain stops, keeping the rest.
    mutating func unavailableDuringDrain(_ failure: XMPPFailure) -> [Action] {
        [.log(LogEntry(level: .info, message: "XMPP is unavailable; Matrix events wait in the inbox", metadata: ["error": "\(failure)"]))]
            + drainBlocked(retry: failure == .timeout)
    }

    mutating func groupchatSent(_ delivery: XMPPDelivery, failure: XMPPFailure?) -> [Action] {
        guard let failure else {
            var actions = [sentLog(delivery)]
            if let caption = delivery.stanza.caption, let occupant = puppets[delivery.user]?.occupant {
                actions.append(.sendCaption(caption, of: delivery.originID, from: occupant))
            }
            return actions + ephemeral(.puppetSent(delivery.user, withBody: delivery.stanza.body != nil))
        }
        return sendFailed(delivery, failure)
    }

    /// Each Matrix → XMPP send, at debug level: with the reflections' stanza-ids (the server's order) these lines say
    /// in which order and on which path (drain, resend) messages went out.
    private func sentLog(_ delivery: XMPPDelivery) -> Action {
        var metadata = ["xmpp.origin.id": delivery.originID.rawValue, "matrix.user.id": delivery.user.rawValue]
        switch delivery.purpose {
        case .inbox(let seq):
            metadata["bridge.send.path"] = "inbox"
            metadata["matrix.inbox.seq"] = "\(seq)"
        case .resend: metadata["bridge.send.path"] = "resend"
        case .afterRefusal: metadata["bridge.send.path"] = "rejoin-resend"
        }
        return .log(LogEntry(level: .debug, message: "Sent a Matrix message to the MUC", metadata: metadata))
    }

    /// A Matrix → XMPP message did not go out.
    private mutating func sendFailed(_ delivery: XMPPDelivery, _ failure: XMPPFailure) -> [Action] {
        switch delivery.purpose {
        case .inbox:
            if failure.isUnavailable { return unavailableDuringDrain(failure) }
            return failedToXMPP(user: delivery.user, originID: delivery.originID, reason: failure.description)
        case .resend:
            let log = Action.log(LogEntry(level: .warning, message: failure.isUnavailable ? "Resend failed; the XMPP side is unavailable" : "Resend failed",
                                          metadata: ["xmpp.origin.id": delivery.originID.rawValue, "error": "\(failure)"]))
            if failure.isUnavailable {
                resendsWentOut = false
                agenda.removeAll { if case .resend = $0 { return true } else { return false } }
            }
            return [log]
        case .afterRefusal(let error):
            return [.log(LogEntry(level: .warning, message: "Resend after rejoin failed", metadata: ["error": "\(failure)"]))]
                + failedToXMPP(user: delivery.user, originID: delivery.originID,
                               reason: error.text.map { "\(error.condition): \($0)" } ?? error.condition.rawValue)
        }
    }

    /// Makes the MUC's Matrix-side occupants match the Matrix room's joined members: missing puppets join (with their
    /// stored nicks after a restart), puppets of users who left the room leave.
    mutating func membersFetched(_ members: JoinedMembers?) -> [Action] {
        guard let members else { return [] }
        for (user, name) in members.displayNames where isBridgedMatrixUser(user) {
            if let name, !name.isEmpty { displaynames[user] = name }
        }
        let users = members.displayNames.keys.filter(isBridgedMatrixUser).sorted { $0.rawValue < $1.rawValue }
        agenda.insert(contentsOf: users.map { Step.ensurePuppet($0, then: .sync) }
                      + [.removeDepartedPuppets(members: Set(members.displayNames.keys))], at: 0)
        // The avatars first, so the puppets' joins announce them.
        return configuration.avatars ? avatars(.memberAvatarsRead(members.avatars)) : []
    }

    /// `puppet`'s occupant leaves the MUC (with a status text saying why, for kicks and bans) and is forgotten.
    mutating func removePuppet(_ puppet: Puppet, status: String?) -> [Action] {
        puppets[puppet.user] = nil
        var actions = roles(.puppetRemoved(puppet.user))
        if puppet.joined, xmppConnected { actions.append(.leaveMUC(nick: puppet.nick, occupant: puppet.occupant, status: status)) }
        return actions + [.deletePuppet(puppet.user)]
    }
}

extension PortalStateMachine.XMPPFailure: CustomStringConvertible {
    var description: String {
        switch self {
        case .notConnected: "the XMPP server is not connected"
        case .timeout: "the XMPP server did not answer in time"
        case .refused(let error): error.text.map { "\(error.condition): \($0)" } ?? error.condition.rawValue
        case .other(let text): text
        }
    }
}

// MARK: - Messages the homeserver never pushed

extension PortalStateMachine {
    /// A message this old that nothing later explains is taken as stranded rather than on its way.
    static let strandedAge: Duration = .seconds(30)

    /// Of a room's recent timeline (oldest first), the bridgeable messages the bridge never saw (`seen`: in the inbox
    /// or the message map) that are stranded rather than on their way: a later event already arrived, or they are
    /// older than ``strandedAge``. See `Portal+MatrixCatchUp`.
    func strandedMessages(in timeline: [MatrixTimelineEntry], seen: Set<EventID>, now: Date) -> [MatrixRoomEvent] {
        let lastSeen = timeline.lastIndex { seen.contains($0.eventID) }
        var missed: [MatrixRoomEvent] = []
        for (index, entry) in timeline.enumerated() where !seen.contains(entry.eventID) {
            guard let event = entry.event, isBridgeableMessage(event) else { continue }
            let age = entry.age ?? .seconds(max(0, now.timeIntervalSince(entry.timestamp)))
            if let lastSeen, index < lastSeen { missed.append(event) } else if age >= Self.strandedAge { missed.append(event) }
        }
        return missed
    }

    /// What the drain's timeline check read: the recent timeline (oldest first), which of its events the bridge has
    /// seen (queued or bridged), how far the inbox was queued before the timeline was read, and the wall clock then.
    struct TimelineRead: Sendable, Equatable {
        var entries: [MatrixTimelineEntry] = []
        var seen: Set<EventID> = []
        var queuedThrough: Int64 = 0
        var now = Date(timeIntervalSince1970: 0)
    }

    /// The timeline check's answer: the drain follows the timeline's order — also when nothing was missing: a
    /// transaction the homeserver delivered late put its events behind later ones in the inbox — and what the
    /// homeserver never pushed is queued first (its late copy is then a duplicate the inbox and the message map drop).
    mutating func timelineRead(_ read: TimelineRead) -> [Action] {
        // A homeserver repeating an event across pages must not crash us: its first place counts.
        drain?.timeline = TimelineOrder(
            positions: Dictionary(read.entries.enumerated().map { ($1.eventID, $0) }, uniquingKeysWith: { first, _ in first }),
            queuedThrough: read.queuedThrough)
        let missed = strandedMessages(in: read.entries, seen: read.seen, now: read.now)
        return missed.isEmpty ? [.readInbox] : [.enqueueStranded(missed)]
    }

    /// The stranded messages were queued (they are in the inbox the drain reads next) — or not: then the next drain
    /// checks again; cut short by shutdown, this one waits, as for a check cut short.
    mutating func strandedQueued(_ outcome: StoreOutcome) -> [Action] {
        switch outcome {
        case .done: return [.readInbox]
        case .failed:
            timelineCheckPending = true
            return [.readInbox]
        case .cancelled:
            timelineCheckPending = true
            return drainBlocked(retry: true)
        }
    }

    /// How a store write the machine waits for ended.
    enum StoreOutcome: Sendable, Equatable {
        case done
        /// Logged by the effect.
        case failed
        /// Cut short by shutdown.
        case cancelled
    }

    /// What a timeline check learnt for the drain after it (see ``drainOrder(_:timeline:)``).
    struct TimelineOrder: Sendable, Equatable {
        /// The room's recent timeline: event id → index, oldest first. Empty: no check (or the timeline could not
        /// be read), so arrival order stands.
        var positions: [EventID: Int] = [:]
        /// Inbox rows up to this number were queued before the timeline was read; a higher one arrived after.
        var queuedThrough: Int64 = 0
    }

    /// The order in which a drain handles the inbox: the store's (arrival) order, except that the entries the room's
    /// timeline names (read by a timeline check) take the timeline's order among the places they hold, and the entries
    /// that arrived after the timeline was read without being in it go last. Entries the timeline does not name that
    /// were queued before it was read (older than the check looked) keep their places.
    ///
    /// Arrival order is not the room's order when the homeserver delivers a transaction late: Synapse retries a held
    /// transaction after newer ones went through, and after a restart or a take-over the process that saw the hole
    /// is gone (seen in FailoverTests on ejabberd: a message in a transaction retried into the instance that took
    /// over was queued behind the later ones the stopped instance had queued, and went out after them). So every
    /// drain that checked the timeline follows it — not only when the check recovered something.
    ///
    /// An event pushed after the timeline was read and not in it is newer than everything the timeline names (the
    /// homeserver pushes an event only once it is stored, so one queued earlier is in the timeline). Keeping its place
    /// put it ahead of a message the check itself recovered, which is queued last (seen in FailoverTests on ejabberd:
    /// a message sent after the check went out before an earlier one, stranded, that the check had found). Pure.
    static func drainOrder(_ queued: [QueuedMatrixEvent], timeline: TimelineOrder) -> [QueuedMatrixEvent] {
        let positions = timeline.positions
        guard !positions.isEmpty else { return queued }
        let arrivedAfter = { (entry: QueuedMatrixEvent) in positions[entry.event.eventID] == nil && entry.seq > timeline.queuedThrough }
        var ordered = queued.filter { !arrivedAfter($0) }
        let places = ordered.indices.filter { positions[ordered[$0].event.eventID] != nil }
        let named = places.map { ordered[$0] }.enumerated().sorted { lhs, rhs in
            // Arrival order breaks ties (the store keeps one row per event; this keeps the sort deterministic anyway).
            (positions[lhs.element.event.eventID]!, lhs.offset) < (positions[rhs.element.event.eventID]!, rhs.offset)
        }
        for (place, entry) in zip(places, named) { ordered[place] = entry.element }
        return ordered + queued.filter(arrivedAfter)
    }

    /// A message, reaction or redaction the portal would act on (see ``matrixEvent(_:)``).
    func isBridgeableMessage(_ event: MatrixRoomEvent) -> Bool {
        guard isBridgedMatrixUser(event.sender) else { return false }
        switch event.content {
        case .message(let msgtype, let body, _):
            return BridgeCommand.parse(msgtype: msgtype, body: body) == nil && MessageTranslation.toXMPP(msgtype: msgtype, body: body) != nil
        case .reaction, .redaction: return true
        case .member, .powerLevels, .topic, .tombstone, .encrypted, .encryptionEnabled: return false
        }
    }
}
