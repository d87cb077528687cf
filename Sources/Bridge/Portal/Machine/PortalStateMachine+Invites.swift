import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// Invitations both ways. A Matrix user inviting an XMPP user's ghost → a XEP-0045 §7.8.2 mediated invitation from
/// the inviter's puppet to that user's real JID. A mediated invitation the MUC forwards to a Matrix user's puppet JID
/// → the bot invites that user into the Matrix room.
extension PortalStateMachine {
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

    /// `m.room.member` invite of a ghost by a Matrix user: its real JID from the room model, else from the store.
    mutating func ghostInvited(_ ghost: UserID, by inviter: UserID, reason: String?, eventID: EventID, seq: Int64) -> [Action] {
        var invite = GhostInvite(inviter: inviter, ghost: ghost, reason: reason, seq: seq, eventID: eventID)
        if let known = occupants.values.first(where: { $0.ghost == ghost })?.realJID ?? ghosts[ghost]?.realJID {
            invite.invitee = known.bare
            return inviteReady(invite)
        }
        return [.lookUpGhostAddress(invite)]
    }

    /// The store said which real JID the ghost stands for (nil: none is known, e.g. a semi-anonymous room's occupant).
    mutating func ghostAddressFound(_ invite: GhostInvite, _ address: JID?) -> [Action] {
        guard let address else {
            let name = displaynames[invite.inviter] ?? invite.inviter.localpart
            return [.log(LogEntry(level: .info, message: "A Matrix invite of a ghost has no XMPP address to go to",
                                  metadata: ["matrix.user.id": invite.ghost.rawValue])),
                    .postNotice("⚠️ \(name)'s invitation was not sent to XMPP: the XMPP room did not reveal that user's address, "
                                + "so the bridge cannot invite them.", subject: "invite:\(invite.eventID.rawValue)"),
                    .dequeue(seq: invite.seq)]
        }
        var ready = invite
        ready.invitee = address.bare
        return inviteReady(ready)
    }

    /// The inviter's puppet asks the room to invite the XMPP user (joined first when it is not in the room).
    private mutating func inviteReady(_ invite: GhostInvite) -> [Action] {
        ensurePuppet(invite.inviter, then: .invite(invite))
    }

    /// The puppet is in the room: the mediated invitation goes out and the event is done. Its id is remembered for a
    /// while (the last ``maxPendingInvites``), so a refusal the room bounces can be told in the Matrix room.
    mutating func sendGhostInvite(_ invite: GhostInvite, from puppet: Puppet) -> [Action] {
        guard let invitee = invite.invitee else { return [.dequeue(seq: invite.seq)] }
        let id = configuration.naming.originID(for: invite.eventID)
        pendingInvites.removeAll { $0.id == id }
        pendingInvites.append((id, invite))
        if pendingInvites.count > Self.maxPendingInvites { pendingInvites.removeFirst() }
        return [.sendInvite(from: puppet.occupant, to: invitee, reason: invite.reason, id: id), .dequeue(seq: invite.seq)]
    }

    /// How many sent invitations are remembered for their refusals.
    static let maxPendingInvites = 32

    /// The room bounced one of our invitations (ejabberd, for one: "Invitations are not allowed in this conference"
    /// unless the room allows occupants' invitations): the inviter is told in the Matrix room. nil: not ours.
    mutating func inviteRefused(_ id: OriginID, _ error: StanzaErrorInfo) -> [Action]? {
        guard let index = pendingInvites.firstIndex(where: { $0.id == id }) else { return nil }
        let invite = pendingInvites.remove(at: index).invite
        let name = displaynames[invite.inviter] ?? invite.inviter.localpart
        let reason = error.text.map { "\(error.condition): \($0)" } ?? error.condition.rawValue
        return [.log(LogEntry(level: .notice, message: "The MUC refused an invitation", metadata: ["xmpp.error": error.condition.rawValue])),
                .postNotice("⚠️ \(name)'s invitation could not be delivered to the XMPP room (\(reason)).",
                            subject: "invite-refused:\(invite.eventID.rawValue)")]
    }

    /// The MUC forwarded a mediated invitation to one of our JIDs: the Matrix user whose puppet it is gets invited.
    /// Anything else (our own occupant, a JID that is no puppet's) is logged, at most once a minute.
    mutating func xmppInvite(_ invite: RoomInvite) -> [Action] {
        guard let user = invitedMatrixUser(invite.invitee), isBridgedMatrixUser(user) else {
            return rateLimitedLog(LogEntry(level: .warning, message: "Ignored an XMPP invitation to a JID that is no Matrix user's",
                                           metadata: ["xmpp.muc": configuration.muc.description, "xmpp.invitee": invite.invitee.description]))
        }
        let inviter = invite.inviter.flatMap { jid in occupants.values.first { $0.realJID?.bare == jid.bare }?.nick }
        var reason = inviter.map { "\($0) invited you from the XMPP room" } ?? "Invited from the XMPP room"
        if let text = invite.reason { reason += ": \(text)" }
        return [.inviteToMatrix(user, reason: reason)]
    }

    /// The Matrix user a puppet JID belongs to: a puppet of this room, else the user the JID's localpart names when
    /// it is exactly that user's puppet JID.
    func invitedMatrixUser(_ jid: JID) -> UserID? {
        if let puppet = puppets.values.first(where: { $0.occupant.bare == jid.bare }) { return puppet.user }
        return configuration.naming.matrixUser(forPuppet: jid)
    }

    /// `entry`, unless a rate-limited line was logged within the last minute.
    mutating func rateLimitedLog(_ entry: LogEntry) -> [Action] {
        if let last = lastRateLimitedLog, now - last < .seconds(60) { return [] }
        lastRateLimitedLog = now
        return [.log(entry)]
    }
}
