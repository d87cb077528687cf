import IsthmusCommon
import IsthmusStore

/// The invite sub-machine's actions (``InviteMachine/Action``), on the portal's actor. Failures are logged and end the
/// action. Not only I/O: `lookUpGhostAddress(_:)` decides which stored ghost identities are XMPP addresses.
extension Portal {
    /// Performs one action of the invite sub-machine; returns its outcome when the machine waits for one.
    func performInvites(_ action: InviteMachine.Action) async -> PortalStateMachine.Input? {
        switch action {
        case .lookUpGhostAddress(let invite): return .invites(await lookUpGhostAddress(invite))
        case .sendInvite(let sender, let invitee, let reason, let id): await sendInvite(from: sender, to: invitee, reason: reason, id: id)
        case .inviteToMatrix(let user, let reason): await inviteToMatrix(user, reason: reason)
        case .postNotice(let text, let subject): await postNotice(text, subject: subject)
        case .dequeue(let seq): await dequeue(seq: seq)
        case .log(let entry): logger.log(entry.level, entry.message, metadata: entry.metadata)
        }
        return nil
    }

    /// The bot invites `user` into the Matrix room (an XMPP user's mediated invitation); a failure is logged.
    private func inviteToMatrix(_ user: UserID, reason: String) async {
        do {
            try await context.matrix.invite(user, to: link.matrixRoom, reason: reason)
            logger.info("Invited a Matrix user for an XMPP occupant", metadata: ["matrix.user.id": user.rawValue])
        } catch {
            logger.warning("Could not invite a Matrix user", metadata: ["matrix.user.id": user.rawValue, "error": "\(error)"])
        }
    }

    /// A mediated invitation from one of our occupants (XEP-0045 §7.8.2); a failure is logged.
    private func sendInvite(from sender: JID, to invitee: JID, reason: String?, id: OriginID) async {
        do {
            try await context.xmpp.sendInvite(room: link.muc, from: sender, to: invitee, reason: reason, id: id)
        } catch {
            logger.warning("Could not send an XMPP invitation", metadata: ["error": "\(error)"])
        }
    }

    /// The real bare JID a ghost was derived from, from the ghost table (nil: it stands for a room occupant key).
    private func lookUpGhostAddress(_ invite: InviteMachine.GhostInvite) async -> InviteMachine.Input {
        // Identities of occupants without a known real JID are `room#occupant-id:…` or `room#nick:…`
        // (``PortalStateMachine/ghostIdentity(muc:nick:occupantID:realJID:)``): only a plain bare JID is an address.
        var address: JID?
        if let identity = try? await context.store.ghostIdentity(invite.ghost), !identity.contains("#"),
           let jid = JID(identity), jid.localpart != nil {
            address = jid
        }
        return .ghostAddressFound(invite, address)
    }
}
