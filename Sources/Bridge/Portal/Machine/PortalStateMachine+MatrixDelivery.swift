import IsthmusCommon

/// Routing to the ``MatrixDeliveryMachine`` (MUC messages to Matrix, exactly once): the portal machine hands it each
/// input with a read-only view of the room, wraps its actions in ``Action/matrixDelivery(_:)``, hands the ghost machine
/// what it learnt (a ghost's saved state, an occupant) — and goes on with a drain that waited for the
/// reflection of one of ours.
extension PortalStateMachine {
    /// Feeds the delivery sub-machine one input.
    mutating func matrixDelivery(_ input: MatrixDeliveryMachine.Input) -> [Action] {
        var actions: [Action] = []
        for output in matrixDelivery.receive(input, in: matrixDeliveryRoom) {
            switch output {
            case .perform(let action):
                actions.append(.matrixDelivery(action))
            case .portal(.reflected(let originID)):
                // A Matrix event waited for this message's stanza-id: the drain goes on (after the receipt is recorded).
                if let wait = xmppDelivery.receiptWait, wait.originID == originID, canSend, drain == nil {
                    actions += startDrainFromStore(selfCheck: false)
                }
            case .portal(.occupantSeen(let occupant)):
                actions += ghosts(.occupantSeen(occupant))
            case .portal(.ghostSaved(let saved)):
                actions += ghosts(.ghostSaved(saved))
            case .portal(.ghostOut(let user)):
                actions += ghosts(.ghostOut(user))
            }
        }
        return actions
    }

    /// What the delivery machine may read of the room: closures over copies of the model's tables (copy-on-write, so
    /// no copying), never the portal machine itself.
    private var matrixDeliveryRoom: MatrixDeliveryMachine.Room {
        let (table, puppets, configuration, botNick) = (xmppOccupants, puppets, configuration, botNick)
        return MatrixDeliveryMachine.Room(
            trustsStanzaIDs: roomFeatures?.stanzaIDs != false,
            isOurOccupant: { Self.isOurOccupant(nick: $0, realJID: $1, naming: configuration.naming, botNick: botNick, puppets: puppets) },
            ghostPlan: { message, joinedNow, rejoining in
                table.plan(nick: message.nick, occupantID: message.occupantID, realJID: message.realJID, joinedNow: joinedNow,
                           rejoining: rejoining)
            },
            puppetNicks: { Dictionary(puppets.values.map { ($0.nick, $0.user) }, uniquingKeysWith: { first, _ in first }) },
            botJoined: botJoined)
    }
}
