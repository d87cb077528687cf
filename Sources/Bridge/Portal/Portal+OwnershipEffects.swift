import IsthmusCommon

/// The effects of the ownership handover (`RolesMachine+Ownership`): `muc#admin` requests. I/O only; every
/// decision is the machine's. Runs on the portal's actor.
extension Portal {
    /// The bot reads the room's owner and admin lists.
    func readOwnership() async -> RolesMachine.Input {
        let naming = context.naming
        do {
            let owners = try await context.xmpp.affiliated(room: link.muc, .owner, as: naming.botOccupant)
            let admins = try await context.xmpp.affiliated(room: link.muc, .admin, as: naming.botOccupant)
            return .ownershipRead(RolesMachine.OwnershipLists(
                botOwner: owners.contains(naming.botOccupant.bare), domainOwner: owners.contains(naming.componentJID),
                domainAdmin: admins.contains(naming.componentJID)))
        } catch {
            logger.debug("Could not read the MUC's affiliation lists", metadata: ["error": "\(error)"])
            return .ownershipRead(nil)
        }
    }

    /// Makes the plan's changes in order, one request each (a room handles one item per `muc#admin` set: Prosody reads
    /// only the first), up to the first failure.
    func changeAffiliations(_ plan: RolesMachine.OwnershipPlan) async -> RolesMachine.Input {
        let naming = context.naming
        func jid(_ party: RolesMachine.OwnershipParty) -> JID { party == .bot ? naming.botOccupant : naming.componentJID }
        for (step, change) in plan.changes.enumerated() {
            do {
                try await context.xmpp.setAffiliation(room: link.muc, of: jid(change.of).bare, to: change.to, as: jid(change.askedBy))
            } catch {
                return .affiliationsChanged(plan, RolesMachine.OwnershipFailure(step: step, failure: Self.xmppFailure(error)))
            }
        }
        return .affiliationsChanged(plan, nil)
    }
}
