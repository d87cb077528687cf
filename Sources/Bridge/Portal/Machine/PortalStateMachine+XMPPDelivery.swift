import IsthmusCommon

/// Routing to the ``XMPPDeliveryMachine`` (Matrix messages to the MUC, exactly once): the portal machine hands it each
/// input with a read-only view of the room, wraps its actions in ``Action/xmppDelivery(_:)``, and carries out its
/// requests — a sender's puppet made ready first, the drain stopped, paused or retried, the resends stopped.
extension PortalStateMachine {
    /// Feeds the delivery sub-machine one input.
    mutating func xmppDelivery(_ input: XMPPDeliveryMachine.Input) -> [Action] {
        var actions: [Action] = []
        var inTurn: [Step] = []
        for output in xmppDelivery.receive(input, in: xmppDeliveryRoom, now: now) {
            switch output {
            case .perform(let action):
                actions.append(.xmppDelivery(action))
            case .portal(.viaPuppet(let delivery)) where actions.last?.awaitsOutcome == true || !inTurn.isEmpty:
                // A run's messages after the first: each goes when the one before it is out, ahead of the agenda.
                inTurn.append(.ensurePuppet(delivery.user, then: .send(delivery)))
            case .portal(.viaPuppet(let delivery)):
                actions += ensurePuppet(delivery.user, then: .send(delivery))
            case .portal(.puppetOut(let user)):
                actions += puppets(.occupantOut(user))
            case .portal(.drainBlocked):
                actions += drainBlocked(retry: true)
            case .portal(.xmppUnavailable(let failure)):
                actions += unavailableDuringDrain(failure)
            case .portal(.pauseDrain(let until)):
                actions += pauseDrain(until: until)
            case .portal(.resendsStopped):
                resendsWentOut = false
                agenda.removeAll { if case .resend = $0 { return true } else { return false } }
            case .portal(.puppetSent(let user, let withBody)):
                actions += ephemeral(.puppetSent(user, withBody: withBody))
            }
        }
        agenda.insert(contentsOf: inTurn, at: 0)
        return actions
    }

    /// A Matrix event waits for the reflection of the message it refers to: the drain stops (the event stays first in
    /// the inbox) and goes on at the reflection or at `until`.
    private mutating func pauseDrain(until: ContinuousClock.Instant) -> [Action] {
        agenda.removeAll { step in
            switch step {
            case .handleMatrixEvent, .finishDrain: return true
            default: return false
            }
        }
        inboxNeedsReload = true
        let selfCheck = drain?.selfCheck ?? false
        drain = nil
        if selfCheck { agenda.insert(.selfPing, at: 0) }
        return [.schedule(.drainResume, at: until)]
    }

    /// What the delivery machine may read of the room: the model's tables (copy-on-write, so no copying), never the
    /// portal machine itself. Plain values, not closures: this view is made for every input, on the hot path.
    private var xmppDeliveryRoom: XMPPDeliveryMachine.Room {
        XMPPDeliveryMachine.Room(ghosts: ghosts, puppets: puppets, displaynames: displaynames, moderation: roomFeatures?.moderation)
    }
}
