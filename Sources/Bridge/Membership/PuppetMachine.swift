import IsthmusCommon
import IsthmusStore

/// The Matrix room's members and the MUC occupants ("puppets") that stand for them: which nick each one holds, its
/// negotiation when the nick is taken, its join, rename and departure, and the Matrix names the other machines show.
/// A sub-machine of ``PortalStateMachine``: it owns the puppet and displayname tables (the other sub-machines read them
/// through their `Room` views), and its actions reach the ``Portal`` wrapped in ``PortalStateMachine/Action/puppets(_:)``.
/// What waits for a puppet (a message, a subject, an invitation, a membership's inbox row) is named by a
/// ``PortalStateMachine/PuppetFollowUp`` that comes back in a ``Notice`` for the portal machine to route; this machine
/// never looks inside it.
struct PuppetMachine: Sendable {
    /// What the machine knows without being told.
    struct Configuration: Sendable {
        var room: RoomID
        var naming: BridgeNaming
        /// Whether a user is one the bridge mirrors (not the bot, not one of our ghosts).
        var isBridged: @Sendable (UserID) -> Bool
        /// Client mode: every Matrix user speaks through the bridge's own occupant (this JID), so none gets a puppet.
        var relayOccupant: JID? = nil
    }

    /// A join or nick change of a puppet's occupant, and the negotiation it belongs to.
    struct Join: Sendable, Equatable {
        var nick: String
        /// A nick change of an occupant already in the room rather than a join.
        var change: Bool
        var job: PortalStateMachine.PuppetJob
    }

    /// What happened, as far as the Matrix members' occupants go.
    enum Input: Sendable, Equatable {
        /// The room's puppets as stored, read at an activation (none of them joined yet).
        case loaded([Puppet])
        /// Make sure `user` has an occupant in the MUC, then go on with the follow-up.
        case ensure(UserID, then: PortalStateMachine.PuppetFollowUp)
        /// A Matrix join (or profile change) with the member's per-room displayname: its occupant follows.
        case memberJoined(UserID, displayname: String?, then: PortalStateMachine.PuppetFollowUp)
        /// A Matrix leave, kick (`by` someone else) or ban: the occupant leaves, saying why.
        case memberLeft(UserID, banned: Bool, by: UserID, reason: String?)
        /// The room answered ``Action/join(_:)`` (a nick change's answer reads as a join's).
        case joinAnswered(Join, JoinOutcome)
        /// ``Action/join(_:)`` got no answer.
        case joinFailed(Join, PortalStateMachine.XMPPFailure)
        /// The occupants are brought in line with the Matrix room's members: they are read first.
        case sync
        /// The outcome of ``Action/fetchMembers``; nil when the members could not be read.
        case membersFetched(JoinedMembers?)
        /// After a sync: occupants of users who are no longer members leave.
        case removeDeparted(members: Set<UserID>)
        /// One of our occupants' unavailable presence that we did not ask for (kick, ban, removal after an error).
        case occupantLeft(RoomPresence)
        /// The MUC told the delivery that `user`'s occupant is no longer in the room.
        case occupantOut(UserID)
        /// The XMPP side went (disconnected, or the MUC destroyed): no occupant of ours is in the room any more.
        case xmppGone
    }

    /// What the portal must do, in order.
    enum Action: Sendable, Equatable {
        /// → ``Input/joinAnswered(_:_:)`` or ``Input/joinFailed(_:_:)``: the occupant joins the MUC (or changes nick).
        case join(Join)
        /// The occupant leaves the MUC, with a status text.
        case leave(nick: String, occupant: JID, status: String?)
        case save(Puppet)
        case delete(UserID)
        /// → ``Input/membersFetched(_:)``: the Matrix room's joined members.
        case fetchMembers
        case log(PortalStateMachine.LogEntry)

        /// Whether the machine waits for this action's outcome.
        var awaitsOutcome: Bool {
            switch self {
            case .join, .fetchMembers: true
            case .leave, .save, .delete, .log: false
            }
        }
    }

    /// What the portal machine must hear of, in order with the actions: facts, which it routes to whoever cares.
    enum Notice: Sendable, Equatable {
        /// The puppet is in the MUC under its nick: what waited for it goes on.
        case ready(Puppet, PortalStateMachine.PuppetFollowUp)
        /// The puppet could not be made ready; `name` is the user's as the room shows it.
        case failed(UserID, name: String, PortalStateMachine.PuppetFollowUp, PortalStateMachine.XMPPFailure)
        /// An occupant of ours joined the MUC, or is gone from it (the roles follow).
        case joined(UserID)
        case removed(UserID)
        /// The Matrix room's members were read: `bridged` (sorted) are to have occupants, the others' leave.
        case membersRead(JoinedMembers, bridged: [UserID])
    }

    typealias Output = SubMachineOutput<Action, Notice>
    typealias LogEntry = PortalStateMachine.LogEntry

    let configuration: Configuration
    /// Matrix users' occupants, by Matrix user (loaded at activation, then kept in step with every write the machine asks for).
    private(set) var puppets: [UserID: Puppet] = [:]
    /// Matrix members' current displaynames (per room), as last seen.
    private(set) var displaynames: [UserID: String] = [:]

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Takes one input; returns what to do, in order (an action that awaits its outcome comes last). `xmppConnected`:
    /// whether the XMPP link is up (no join is tried, and no leave sent, while it is not).
    mutating func receive(_ input: Input, xmppConnected: Bool) -> [Output] {
        switch input {
        case .loaded(let stored):
            for puppet in stored where puppets[puppet.user] == nil {
                var loaded = puppet
                loaded.joined = false
                puppets[puppet.user] = loaded
                displaynames[puppet.user] = displaynames[puppet.user] ?? puppet.displayname
            }
            return []
        case .ensure(let user, let followUp):
            return ensure(user, then: followUp, xmppConnected: xmppConnected)
        case .memberJoined(let user, let displayname, let followUp):
            displaynames[user] = displayname.flatMap { $0.isEmpty ? nil : $0 }
            return ensure(user, then: followUp, xmppConnected: xmppConnected)
        case .memberLeft(let user, let banned, let sender, let reason):
            guard let puppet = puppets[user] else { return [] }
            var status: String?
            if sender != user {
                let who = displaynames[sender] ?? sender.localpart
                status = "\(banned ? "Banned" : "Kicked") on Matrix by \(who)" + (reason.map { ": \($0)" } ?? "")
            }
            displaynames[user] = nil
            return remove(puppet, status: status, xmppConnected: xmppConnected)
        case .joinAnswered(let join, let outcome):
            return answered(join.job, outcome)
        case .joinFailed(let join, let failure):
            return failed(join.job.user, join.job.then, failure)
        case .sync:
            return [.perform(.fetchMembers)]
        case .membersFetched(let members):
            guard let members else { return [] }
            for (user, name) in members.displayNames where configuration.isBridged(user) {
                if let name, !name.isEmpty { displaynames[user] = name }
            }
            let bridged = members.displayNames.keys.filter(configuration.isBridged).sorted { $0.rawValue < $1.rawValue }
            return [.portal(.membersRead(members, bridged: bridged))]
        case .removeDeparted(let members):
            return puppets.values.filter { !members.contains($0.user) }.sorted { $0.user.rawValue < $1.user.rawValue }
                .flatMap { remove($0, status: nil, xmppConnected: xmppConnected) }
        case .occupantLeft(let presence):
            return occupantLeft(presence)
        case .occupantOut(let user):
            puppets[user]?.joined = false
            return []
        case .xmppGone:
            for user in puppets.keys { puppets[user]?.joined = false }
            return []
        }
    }

    /// The nick is the user's displayname (else the localpart); on conflict a deterministic alternative (`Name
    /// (Matrix)`, then numbered) is kept until the displayname changes. Never sends under someone else's nick: the MUC
    /// assigns nicks uniquely.
    /// Whether the user's puppet is in the MUC under its current displayname: what waits for it goes on at once, with
    /// nothing to rename first (``ensure(_:then:xmppConnected:)``'s fast path, outside client mode).
    func isReady(_ user: UserID) -> Bool {
        guard let puppet = puppets[user] else { return false }
        return puppet.joined && puppet.displayname == (displaynames[user] ?? user.localpart)
    }

    private func ensure(_ user: UserID, then followUp: PortalStateMachine.PuppetFollowUp, xmppConnected: Bool) -> [Output] {
        let displayname = displaynames[user] ?? user.localpart
        if let relay = configuration.relayOccupant {
            // Client mode: what waits goes on from the relay occupant, which the activation joined; nothing is stored.
            guard xmppConnected else { return failed(user, followUp, .notConnected) }
            return [.portal(.ready(Puppet(room: configuration.room, user: user, occupant: relay, nick: configuration.naming.botNick,
                                          displayname: displayname, joined: true), followUp))]
        }
        if isReady(user), let puppet = puppets[user] { return [.portal(.ready(puppet, followUp))] }
        guard xmppConnected else { return failed(user, followUp, .notConnected) }
        guard let occupant = configuration.naming.puppetJID(for: user) else { return failed(user, followUp, .other("no JID for \(user)")) }
        let previous = puppets[user]
        // Keep the alternative nick we already hold when the displayname did not change (no churn after restarts).
        let first = previous?.displayname == displayname ? attemptIndex(of: previous?.nick, for: displayname) : 0
        return tryNick(PortalStateMachine.PuppetJob(user: user, displayname: displayname, occupant: occupant, firstAttempt: first,
                                                    attempt: first, then: followUp))
    }

    private func tryNick(_ job: PortalStateMachine.PuppetJob) -> [Output] {
        let nick = configuration.naming.nick(for: job.displayname, attempt: job.attempt)
        let change = puppets[job.user].map { $0.joined && $0.nick != nick } ?? false
        return [.perform(.join(Join(nick: nick, change: change, job: job)))]
    }

    private func attemptIndex(of nick: String?, for displayname: String) -> Int {
        guard let nick else { return 0 }
        for attempt in 0..<20 where configuration.naming.nick(for: displayname, attempt: attempt) == nick { return attempt }
        return 0
    }

    private mutating func answered(_ job: PortalStateMachine.PuppetJob, _ outcome: JoinOutcome) -> [Output] {
        switch outcome {
        case .joined(let presence):
            let puppet = Puppet(room: configuration.room, user: job.user, occupant: job.occupant, nick: presence.nick,
                                displayname: job.displayname, joined: true)
            puppets[job.user] = puppet
            return [.portal(.joined(job.user)), .perform(.save(puppet)),
                    .perform(.log(LogEntry(level: .debug, message: "Puppet joined", metadata: ["matrix.user.id": job.user.rawValue, "xmpp.nick": presence.nick]))),
                    .portal(.ready(puppet, job.then))]
        case .nickConflict:
            let tried = configuration.naming.nick(for: job.displayname, attempt: job.attempt)
            let log = Output.perform(.log(LogEntry(level: .info, message: "Nick taken; trying an alternative",
                                                   metadata: ["matrix.user.id": job.user.rawValue, "xmpp.nick": tried])))
            guard job.attempt + 1 < job.firstAttempt + 10 else {
                return [log] + failed(job.user, job.then, .other("every nick tried for \(job.user) is taken"))
            }
            var next = job
            next.attempt += 1
            return [log] + tryNick(next)
        case .notAllowed(let error):
            return failed(job.user, job.then, .refused(StanzaErrorInfo(condition: error.condition, text: error.text)))
        }
    }

    private func failed(_ user: UserID, _ followUp: PortalStateMachine.PuppetFollowUp, _ failure: PortalStateMachine.XMPPFailure) -> [Output] {
        [.portal(.failed(user, name: displaynames[user] ?? user.localpart, followUp, failure))]
    }

    /// `puppet`'s occupant leaves the MUC (with a status text saying why, for kicks and bans) and is forgotten.
    private mutating func remove(_ puppet: Puppet, status: String?, xmppConnected: Bool) -> [Output] {
        puppets[puppet.user] = nil
        var outputs: [Output] = [.portal(.removed(puppet.user))]
        if puppet.joined, xmppConnected { outputs.append(.perform(.leave(nick: puppet.nick, occupant: puppet.occupant, status: status))) }
        return outputs + [.perform(.delete(puppet.user))]
    }

    /// One of our puppets left the room without being asked: it is no longer joined, so the next message from its
    /// Matrix user rejoins it (and reports a refusal to the user).
    private mutating func occupantLeft(_ presence: RoomPresence) -> [Output] {
        guard !presence.available, !presence.statusCodes.contains(.nickChanged),
              let user = puppets.first(where: { $0.value.nick == presence.nick })?.key else { return [] }
        puppets[user]?.joined = false
        return [.perform(.log(LogEntry(level: .notice, message: "A Matrix user's occupant was removed from the MUC", metadata: [
            "matrix.user.id": user.rawValue, "xmpp.status": presence.statusCodes.sorted().map(\.description).joined(separator: ","),
        ])))]
    }
}
