import IsthmusCommon

/// The bridge's own presence in both rooms (``PortalStateMachine/BotAction``): the bot joins the Matrix room, the
/// bridge's occupant joins the MUC and pings itself. Runs on the portal's actor; only performs.
extension Portal {
    func performBot(_ action: PortalStateMachine.BotAction) async -> PortalStateMachine.Input {
        switch action {
        case .joinMatrix:
            return await joinMatrixAsBot()
        case .joinMUC(let join):
            switch await joinMUC(nick: join.nick, occupant: join.occupant, change: false) {
            case .success(let outcome): return .botJoinedMUC(join, outcome)
            case .failure(let failure): return .botJoinFailed(join, failure)
            }
        case .selfPing(let nick):
            return await selfPing(nick: nick)
        }
    }

    private func joinMatrixAsBot() async -> PortalStateMachine.Input {
        do {
            try await context.matrix.join(link.matrixRoom, as: context.matrix.botUserID)
            return .botJoinedMatrix(error: nil)
        } catch {
            return .botJoinedMatrix(error: Self.matrixFailure(error))
        }
    }

    private func selfPing(nick: String) async -> PortalStateMachine.Input {
        do {
            return .selfPinged(try await context.xmpp.selfPing(room: link.muc, nick: nick, occupant: context.naming.botOccupant))
        } catch {
            logger.debug("Self-ping failed", metadata: ["error": "\(error)"])
            return .selfPinged(nil)
        }
    }
}
