import IsthmusCommon
import IsthmusStore

/// Routing to the ``PuppetMachine`` (the Matrix members' occupants in the MUC): the portal machine hands it each input
/// with whether the XMPP link is up, wraps its actions in ``Action/puppets(_:)``, and carries what it reports
/// (``PuppetMachine/Notice``) to whoever waited: a ready puppet's message, subject or invitation goes on, a failure is
/// told or makes the drain wait, the roles follow the puppets, a member sync puts its joins on the agenda.
extension PortalStateMachine {
    /// Feeds the puppet sub-machine one input.
    mutating func puppets(_ input: PuppetMachine.Input) -> [Action] {
        var actions: [Action] = []
        for output in matrixMembers.receive(input, xmppConnected: xmppConnected) {
            switch output {
            case .perform(let action): actions.append(.puppets(action))
            case .portal(let notice): actions += heard(notice)
            }
        }
        return actions
    }

    /// Makes sure `user` has an occupant in the MUC, then goes on with `followUp`.
    mutating func ensurePuppet(_ user: UserID, then followUp: PuppetFollowUp) -> [Action] {
        puppets(.ensure(user, then: followUp))
    }

    private mutating func heard(_ notice: PuppetMachine.Notice) -> [Action] {
        switch notice {
        case .ready(let puppet, let followUp):
            return puppetReady(puppet, followUp)
        case .failed(let user, let name, let followUp, let failure):
            return puppetFailed(user, name: name, followUp, failure)
        case .joined(let user):
            return roles(.puppetJoined(user))
        case .removed(let user):
            return roles(.puppetRemoved(user))
        case .membersRead(let members, let bridged):
            agenda.insert(contentsOf: bridged.map { Step.ensurePuppet($0, then: .sync) }
                          + [.removeDepartedPuppets(members: Set(members.displayNames.keys))], at: 0)
            // The avatars first, so the puppets' joins announce them.
            return configuration.avatars ? avatars(.memberAvatarsRead(members.avatars)) : []
        }
    }

    /// The puppet is in the MUC: what waited for it goes on.
    private mutating func puppetReady(_ puppet: Puppet, _ followUp: PuppetFollowUp) -> [Action] {
        switch followUp {
        case .membership(_, let seq):
            return [.dequeue(seq: seq)]
        case .sync:
            return []
        case .send(let delivery):
            return xmppDelivery(.puppetReady(delivery, occupant: puppet.occupant))
        case .subject(let change):
            return roomState(.puppetReady(change))
        case .invite(let invite):
            return invites(.puppetReady(invite, occupant: puppet.occupant))
        }
    }

    /// The puppet could not be made ready: a wait for the XMPP side, or a report.
    private mutating func puppetFailed(_ user: UserID, name: String, _ followUp: PuppetFollowUp, _ failure: XMPPFailure) -> [Action] {
        switch followUp {
        case .membership(let eventID, let seq):
            if failure.isUnavailable { return unavailableDuringDrain(failure) }
            return [.log(LogEntry(level: .warning, message: "Puppet could not join", metadata: ["matrix.user.id": user.rawValue, "error": "\(failure)"])),
                    .postNotice("⚠️ \(name) could not join the XMPP room (\(failure.description)).", subject: "join-failed:\(eventID.rawValue)"),
                    .dequeue(seq: seq)]
        case .sync:
            let log = Action.log(LogEntry(level: .warning, message: "Puppet could not join", metadata: ["matrix.user.id": user.rawValue, "error": "\(failure)"]))
            if failure == .notConnected {
                agenda.removeAll { step in
                    if case .ensurePuppet(_, .sync) = step { return true }
                    if case .removeDepartedPuppets = step { return true }
                    return false
                }
            }
            return [log]
        case .send(let delivery):
            return xmppDelivery(.puppetFailed(delivery, failure))
        case .subject(let change):
            return roomState(.puppetFailed(change, failure))
        case .invite(let invite):
            if failure.isUnavailable { return unavailableDuringDrain(failure) }
            return [.log(LogEntry(level: .warning, message: "Puppet could not join to send an invitation",
                                  metadata: ["matrix.user.id": user.rawValue, "error": "\(failure)"])),
                    .dequeue(seq: invite.seq)]
        }
    }

    /// The XMPP side was unavailable while a Matrix event was being handled: the drain stops, keeping the rest.
    mutating func unavailableDuringDrain(_ failure: XMPPFailure) -> [Action] {
        [.log(LogEntry(level: .info, message: "XMPP is unavailable; Matrix events wait in the inbox", metadata: ["error": "\(failure)"]))]
            + drainBlocked(retry: failure == .timeout)
    }
}
