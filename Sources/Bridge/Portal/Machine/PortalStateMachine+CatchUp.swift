import IsthmusCommon

/// Routing to the ``CatchUpMachine`` (the room's features, the archive catch-up, the drain's timeline check and
/// order): the portal machine hands it each input with a read-only view of the room, wraps its actions in
/// ``Action/catchUp(_:)``, and carries out its requests — archived messages go on the agenda first, a drain's
/// events in the order the machine chose, undecodable rows are dropped, a blocked drain waits.
extension PortalStateMachine {
    /// Feeds the catch-up sub-machine one input.
    mutating func catchUp(_ input: CatchUpMachine.Input) -> [Action] {
        let configuration = configuration
        var actions: [Action] = []
        for output in catchUp.receive(input, in: CatchUpMachine.Room(isBridgeable: { configuration.isBridgeableMessage($0) })) {
            switch output {
            case .perform(let action):
                actions.append(.catchUp(action))
            case .portal(.featuresKnown(let features)):
                actions += roomState(.featuresRead(features))
            case .portal(.bridgeArchived(let messages)):
                agenda.insert(contentsOf: messages.map(Step.bridgeRoomMessage), at: 0)
            case .portal(.drain(let queued, let undecodable)):
                actions += undecodable.flatMap { [Action.log($0.dropped), .dequeue(seq: $0.seq)] }
                agenda.insert(contentsOf: queued.map(Step.handleMatrixEvent) + [.finishDrain(highestSeq: queued.map(\.seq).max() ?? 0)], at: 0)
            case .portal(.drainBlocked):
                actions += drainBlocked(retry: true)
            }
        }
        return actions
    }

    /// What the room announced when last asked (kept by the catch-up machine); nil until known.
    var roomFeatures: RoomFeatures? { catchUp.features }
}
