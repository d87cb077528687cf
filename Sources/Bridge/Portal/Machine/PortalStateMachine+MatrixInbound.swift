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
            return xmppDelivery(.event(queued))
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
            return xmppDelivery(.puppetReady(delivery, occupant: puppet.occupant))
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
            return xmppDelivery(.puppetFailed(delivery, failure))
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

extension PortalStateMachine {
    /// A message, reaction or redaction the portal would act on (see ``matrixEvent(_:)``).
    func isBridgeableMessage(_ event: MatrixRoomEvent) -> Bool {
        configuration.isBridgeableMessage(event)
    }
}

extension PortalStateMachine.Configuration {
    /// A message, reaction or redaction the portal would act on: from a Matrix user the bridge mirrors, not a command,
    /// with something to say in the MUC. Pure.
    func isBridgeableMessage(_ event: MatrixRoomEvent) -> Bool {
        guard event.sender != botUserID && !isGhost(event.sender) else { return false }
        switch event.content {
        case .message(let msgtype, let body, _):
            return BridgeCommand.parse(msgtype: msgtype, body: body) == nil && MessageTranslation.toXMPP(msgtype: msgtype, body: body) != nil
        case .reaction, .redaction: return true
        case .member, .powerLevels, .topic, .tombstone, .encrypted, .encryptionEnabled: return false
        }
    }
}
