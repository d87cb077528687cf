import IsthmusCommon
import IsthmusStore

/// The puppet machine's actions (``PuppetMachine/Action``): the Matrix members' occupants joining, renaming and
/// leaving the MUC, their saved state, and the Matrix room's member list. Runs on the portal's actor; only performs.
extension Portal {
    func performPuppets(_ action: PuppetMachine.Action) async -> PortalStateMachine.Input? {
        switch action {
        case .join(let join):
            switch await joinMUC(nick: join.nick, occupant: join.job.occupant, change: join.change) {
            case .success(let outcome): return .puppets(.joinAnswered(join, outcome))
            case .failure(let failure): return .puppets(.joinFailed(join, failure))
            }
        case .leave(let nick, let occupant, let status):
            await leaveMUC(nick: nick, occupant: occupant, status: status)
        case .save(let puppet):
            do {
                try await context.durably { try await context.store.savePuppet(puppet) }
            } catch {
                logger.error("Could not save a puppet", metadata: ["matrix.user.id": puppet.user.rawValue, "error": "\(error)"])
            }
        case .delete(let user):
            do {
                try await context.durably { try await context.store.deletePuppet(room: link.matrixRoom, user: user) }
            } catch {
                logger.error("Could not forget a puppet", metadata: ["matrix.user.id": user.rawValue, "error": "\(error)"])
            }
        case .fetchMembers:
            do {
                return .puppets(.membersFetched(try await context.matrix.joinedMembers(link.matrixRoom)))
            } catch {
                logger.error("Could not list Matrix members", metadata: ["error": "\(error)"])
                return .puppets(.membersFetched(nil))
            }
        case .log(let entry):
            logger.log(entry.level, entry.message, metadata: entry.metadata)
        }
        return nil
    }
}
