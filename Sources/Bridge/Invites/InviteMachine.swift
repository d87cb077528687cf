import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// Invitations both ways, a sub-machine of ``PortalStateMachine``: it owns its state, reads the room only through the
/// ``Room`` view it is handed with each input, and its actions reach the ``Portal`` wrapped in
/// ``PortalStateMachine/Action/invites(_:)``; its one ``Request`` is the portal machine's to carry out.
///
/// - A Matrix user inviting an XMPP user's ghost → a XEP-0045 §7.8.2 mediated invitation from the inviter's puppet to
///   that user's real JID. The puppet is made ready by the portal machine (``Request/puppet(_:)``), which hands
///   the invitation back with ``Input/puppetReady(_:occupant:)``.
/// - A mediated invitation the MUC forwards to a Matrix user's puppet JID → the bot invites that user into the Matrix room.
/// - An invitation of the bridge itself (mediated, or XEP-0249 direct to the account) → the portal machine joins again
///   if the MUC had refused it (``Request/botInvited(_:)``).
struct InviteMachine: Sendable {
    /// What happened, as far as invitations go.
    enum Input: Sendable, Equatable {
        /// `m.room.member` invite of a ghost by a Matrix user.
        case ghostInvited(GhostInvite)
        /// The outcome of ``Action/lookUpGhostAddress(_:)``: the real JID the ghost stands for (nil: none is known).
        case ghostAddressFound(GhostInvite, JID?)
        /// The inviter's puppet is in the MUC, as this occupant JID.
        case puppetReady(GhostInvite, occupant: JID)
        /// The MUC bounced a message with this id: one of our invitations, or (nothing returned) not ours.
        case refused(OriginID, StanzaErrorInfo)
        /// The MUC forwarded a mediated invitation to one of our JIDs.
        case xmppInvite(RoomInvite)
    }

    /// What the portal must do, in order.
    enum Action: Sendable, Equatable {
        /// → ``Input/ghostAddressFound(_:_:)``: the real JID a ghost stands for, from the ghost table.
        case lookUpGhostAddress(GhostInvite)
        /// A XEP-0045 §7.8.2 mediated invitation from one of our occupants to a real JID; a failure is logged.
        case sendInvite(from: JID, to: JID, reason: String?, id: OriginID)
        /// The bot invites a Matrix user into the room (a mediated invitation from the MUC); a failure is logged.
        case inviteToMatrix(UserID, reason: String)
        /// A notice from the bot in the Matrix room (idempotent per subject).
        case postNotice(String, subject: String)
        /// The invite's inbox row is handled.
        case dequeue(seq: Int64)
        case log(LogEntry)

        /// Whether the machine waits for this action's outcome.
        var awaitsOutcome: Bool {
            switch self {
            case .lookUpGhostAddress: true
            case .sendInvite, .inviteToMatrix, .postNotice, .dequeue, .log: false
            }
        }
    }

    /// What only the portal machine can do for an invitation.
    enum Request: Sendable, Equatable {
        /// Make the inviter's puppet ready, then feed ``Input/puppetReady(_:occupant:)`` (its failure is the portal
        /// machine's to handle).
        case puppet(GhostInvite)
        /// The bridge's own occupant (in client mode: the account) was invited: if the MUC refused it, join again now.
        case botInvited(RoomInvite)
    }

    typealias Output = SubMachineOutput<Action, Request>

    /// A Matrix invitation of one of our ghosts on its way to the MUC.
    struct GhostInvite: Sendable, Equatable {
        var inviter: UserID
        var ghost: UserID
        var reason: String?
        /// The invite's inbox row and event.
        var seq: Int64
        var eventID: EventID
        /// The XMPP user's real bare JID, once known.
        var invitee: JID?
    }

    /// What the machine may read of the room's model (kept by the portal machine), handed in with each input.
    struct Room {
        /// The real JID of the ghost's occupant, or of the ghost as stored, when the room model knows it.
        var knownRealJID: (_ ghost: UserID) -> JID?
        /// The inviter's name for notices: its displayname in the room, else its localpart.
        var name: (UserID) -> String
        /// The origin-id our invitation for this Matrix event carries.
        var originID: (EventID) -> OriginID
        /// The Matrix user the bridge mirrors whose puppet this JID is, if any.
        var bridgedUser: (_ puppet: JID) -> UserID?
        /// Whether this bare JID is the bridge's own occupant's (the account's, in client mode).
        var isBridge: (_ jid: JID) -> Bool
        /// The nick of the occupant whose real JID this is, if any.
        var occupantNick: (_ realJID: JID) -> String?
        /// The MUC, for log lines.
        var muc: JID
    }

    typealias LogEntry = PortalStateMachine.LogEntry

    /// How many sent invitations are remembered for their refusals.
    static let maxPendingInvites = 32

    /// Mediated invitations sent lately, by message id, oldest first (the last ``maxPendingInvites``).
    var pendingInvites: [(id: OriginID, invite: GhostInvite)] = []
    /// When the last rate-limited log line (an invitation to a JID that is no Matrix user's) was asked for.
    var lastRateLimitedLog: ContinuousClock.Instant?

    /// Takes one input; returns what to do, in order (an action that awaits its outcome comes last).
    mutating func receive(_ input: Input, in room: Room, now: ContinuousClock.Instant) -> [Output] {
        switch input {
        case .ghostInvited(var invite):
            guard let known = room.knownRealJID(invite.ghost) else { return [.perform(.lookUpGhostAddress(invite))] }
            invite.invitee = known.bare
            return [.portal(.puppet(invite))]
        case .ghostAddressFound(let invite, let address): return ghostAddressFound(invite, address, in: room)
        case .puppetReady(let invite, let occupant): return send(invite, from: occupant, in: room).map(Output.perform)
        case .refused(let id, let error): return refused(id, error, in: room).map(Output.perform)
        case .xmppInvite(let invite) where room.isBridge(invite.invitee): return [.portal(.botInvited(invite))]
        case .xmppInvite(let invite): return xmppInvite(invite, in: room, now: now).map(Output.perform)
        }
    }

    private func ghostAddressFound(_ invite: GhostInvite, _ address: JID?, in room: Room) -> [Output] {
        guard let address else {
            return [Action.log(LogEntry(level: .info, message: "A Matrix invite of a ghost has no XMPP address to go to",
                                        metadata: ["matrix.user.id": invite.ghost.rawValue])),
                    .postNotice("⚠️ \(room.name(invite.inviter))'s invitation was not sent to XMPP: the XMPP room did not reveal "
                                + "that user's address, so the bridge cannot invite them.", subject: "invite:\(invite.eventID.rawValue)"),
                    .dequeue(seq: invite.seq)].map(Output.perform)
        }
        var ready = invite
        ready.invitee = address.bare
        return [.portal(.puppet(ready))]
    }

    /// The puppet is in the room: the mediated invitation goes out and the event is done. Its id is remembered for a
    /// while, so a refusal the room bounces can be told in the Matrix room.
    private mutating func send(_ invite: GhostInvite, from occupant: JID, in room: Room) -> [Action] {
        guard let invitee = invite.invitee else { return [.dequeue(seq: invite.seq)] }
        let id = room.originID(invite.eventID)
        pendingInvites.removeAll { $0.id == id }
        pendingInvites.append((id, invite))
        if pendingInvites.count > Self.maxPendingInvites { pendingInvites.removeFirst() }
        return [.sendInvite(from: occupant, to: invitee, reason: invite.reason, id: id), .dequeue(seq: invite.seq)]
    }

    /// The room bounced one of our invitations (ejabberd, for one: "Invitations are not allowed in this conference"
    /// unless the room allows occupants' invitations): the inviter is told in the Matrix room.
    private mutating func refused(_ id: OriginID, _ error: StanzaErrorInfo, in room: Room) -> [Action] {
        guard let index = pendingInvites.firstIndex(where: { $0.id == id }) else { return [] }
        let invite = pendingInvites.remove(at: index).invite
        let reason = error.text.map { "\(error.condition): \($0)" } ?? error.condition.rawValue
        return [.log(LogEntry(level: .notice, message: "The MUC refused an invitation", metadata: ["xmpp.error": error.condition.rawValue])),
                .postNotice("⚠️ \(room.name(invite.inviter))'s invitation could not be delivered to the XMPP room (\(reason)).",
                            subject: "invite-refused:\(invite.eventID.rawValue)")]
    }

    /// The Matrix user whose puppet the invitee is gets invited. Anything else (our own occupant, a JID that is no
    /// puppet's) is logged, at most once a minute.
    private mutating func xmppInvite(_ invite: RoomInvite, in room: Room, now: ContinuousClock.Instant) -> [Action] {
        guard let user = room.bridgedUser(invite.invitee) else {
            if let last = lastRateLimitedLog, now - last < .seconds(60) { return [] }
            lastRateLimitedLog = now
            return [.log(LogEntry(level: .warning, message: "Ignored an XMPP invitation to a JID that is no Matrix user's",
                                  metadata: ["xmpp.muc": room.muc.description, "xmpp.invitee": invite.invitee.description]))]
        }
        let inviter = invite.inviter.flatMap(room.occupantNick)
        var reason = inviter.map { "\($0) invited you from the XMPP room" } ?? "Invited from the XMPP room"
        if let text = invite.reason { reason += ": \(text)" }
        return [.inviteToMatrix(user, reason: reason)]
    }
}
