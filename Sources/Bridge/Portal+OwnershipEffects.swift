import IsthmusCommon

/// The effect of ``PortalStateMachine/Action/settleOwnership(_:)``: two `muc#admin` sets. I/O only; the decision is
/// the machine's (`PortalStateMachine+Ownership`). Runs on the portal's actor.
extension Portal {
    /// Makes the bot's bare JID the room's owner, asked by the handover's grantor, then — asked by the bot, owner by
    /// then — takes the component's domain JID's affiliation away. Two requests because a room handles one item per
    /// `muc#admin` set (Prosody reads only the first).
    func settleOwnership(_ handover: PortalStateMachine.OwnershipHandover) async -> PortalStateMachine.Input {
        let naming = context.naming
        let grantor = handover.grantor == .bot ? naming.botOccupant : naming.componentJID
        do {
            try await context.xmpp.setAffiliation(room: link.muc, of: naming.botOccupant.bare, to: .owner, as: grantor)
        } catch {
            return .ownershipSettled(handover, Self.ownershipFailure(error, refused: PortalStateMachine.OwnershipOutcome.grantRefused))
        }
        do {
            try await context.xmpp.setAffiliation(room: link.muc, of: naming.componentJID, to: .none, as: naming.botOccupant)
        } catch {
            return .ownershipSettled(handover, Self.ownershipFailure(error, refused: PortalStateMachine.OwnershipOutcome.removalRefused))
        }
        return .ownershipSettled(handover, .settled)
    }

    /// A refusal as `refused` says, anything else as a failure to retry.
    private static func ownershipFailure(_ error: any Error,
                                         refused: (StanzaErrorInfo) -> PortalStateMachine.OwnershipOutcome) -> PortalStateMachine.OwnershipOutcome {
        if case .refused(let info) = xmppFailure(error) { return refused(info) }
        return .failed(xmppFailure(error))
    }
}
