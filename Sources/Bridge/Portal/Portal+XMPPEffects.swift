import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The XMPP side of the portal's actions: MUC operations for our occupants, as the machine asked. Runs on the portal's actor.
extension Portal {
    /// An occupant of ours joins the MUC, or changes its nick when `change` (the answer reads as a join's).
    func joinMUC(nick: String, occupant: JID, change: Bool) async -> Result<JoinOutcome, PortalStateMachine.XMPPFailure> {
        do {
            return .success(change
                ? JoinOutcome(try await context.xmpp.changeNick(room: link.muc, to: nick, occupant: occupant))
                : try await context.xmpp.join(room: link.muc, nick: nick, occupant: occupant))
        } catch {
            return .failure(Self.xmppFailure(error))
        }
    }

    func leaveMUC(nick: String, occupant: JID, status: String?) async {
        do {
            try await context.xmpp.leave(room: link.muc, nick: nick, occupant: occupant, status: status)
        } catch {
            logger.warning("Occupant could not leave", metadata: ["xmpp.nick": nick, "error": "\(error)"])
        }
    }

    func sendPrivate(to occupant: JID, body: String) async {
        do {
            try await context.xmpp.sendPrivate(from: context.naming.botOccupant, to: occupant, body: body)
        } catch {
            logger.warning("Could not send a private message", metadata: ["error": "\(error)"])
        }
    }

    /// The link's errors in the machine's terms.
    static func xmppFailure(_ error: any Error) -> PortalStateMachine.XMPPFailure {
        switch error as? XMPPLinkError {
        case .notConnected?: .notConnected
        case .timeout?: .timeout
        case .stanzaError(let info)?: .refused(info)
        case nil: .other(describe(error))
        }
    }
}

extension JoinOutcome {
    /// A nick change's answer as the machine reads it: like a join's (the self-presence from the new nick).
    init(_ change: NickChangeOutcome) {
        switch change {
        case .changed(let presence): self = .joined(presence)
        case .nickConflict: self = .nickConflict
        case .notAllowed(let error): self = .notAllowed(error)
        }
    }
}
