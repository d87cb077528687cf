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

    /// The stanza-id a plain MUC message would be looked up by (``MatrixDeliveryMachine/plainLookUpKey(_:in:)``).
    func plainLookUpKey(_ message: RoomMessage) -> StanzaID? {
        matrixDelivery.plainLookUpKey(message, in: matrixDeliveryRoom)
    }

    /// What the delivery machine may read of the room: the model's tables (copy-on-write, so no copying) and one
    /// closure over the ghosts' table, never the portal machine itself. Made for every input, on the hot path.
    private var matrixDeliveryRoom: MatrixDeliveryMachine.Room {
        let table = xmppOccupants
        return MatrixDeliveryMachine.Room(
            trustsStanzaIDs: roomFeatures?.stanzaIDs != false,
            botNick: botNick,
            puppets: puppets,
            ghostPlan: { message, joinedNow, rejoining in
                table.plan(nick: message.nick, occupantID: message.occupantID, realJID: message.realJID, joinedNow: joinedNow,
                           rejoining: rejoining)
            },
            botJoined: botJoined)
    }
}
