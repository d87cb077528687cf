import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The Matrix room's events, in inbox order, each to the sub-machine it concerns: messages to the MUC exactly once
/// from their senders' puppets, memberships moving puppets, topic, tombstone and power levels.
extension PortalStateMachine {
    /// One queued Matrix event.
    mutating func matrixEvent(_ queued: QueuedMatrixEvent) -> [Action] {
        let event = queued.event
        switch event.content {
        case .message, .reaction, .redaction:
            guard isBridgedMatrixUser(event.sender) else { return [.dequeue(seq: queued.seq)] }
            return xmppDelivery(.event(queued))
        case .member(let membership, let displayname, let reason):
            if membership == .invite, let ghost = event.stateKey.flatMap(UserID.init), configuration.isGhost(ghost),
               isBridgedMatrixUser(event.sender) {
                return invites(.ghostInvited(.init(inviter: event.sender, ghost: ghost, reason: reason, seq: queued.seq, eventID: event.eventID)))
            }
            guard let user = event.stateKey.flatMap(UserID.init), isBridgedMatrixUser(user) else { return [.dequeue(seq: queued.seq)] }
            switch membership {
            case .join:
                // Before the puppet joins: its join presence then carries the avatar's hash.
                return avatars(.matrixMember(user, mxc: event.avatarURL, present: true))
                    + puppets(.memberJoined(user, displayname: displayname, then: .membership(eventID: event.eventID, seq: queued.seq)))
            case .leave, .ban:
                return puppets(.memberLeft(user, banned: membership == .ban, by: event.sender, reason: reason))
                    + avatars(.matrixMember(user, mxc: nil, present: false)) + [.dequeue(seq: queued.seq)]
            default:
                return [.dequeue(seq: queued.seq)]
            }
        case .topic(let text):
            return roomState(.matrixTopic(queued, text: text))
        case .tombstone(let replacement, _):
            return roomState(.tombstone(queued, replacement: replacement))
        case .powerLevels(let users, let usersDefault):
            return roles(.matrixPowerLevelsChanged(users: users, usersDefault: usersDefault)) + [.dequeue(seq: queued.seq)]
        case .encrypted, .encryptionEnabled:
            return encryptedEvent(queued)
        }
    }

    /// An event the bridge cannot read: the room is told (see ``EncryptedEventNotices``), the event is not bridged.
    private mutating func encryptedEvent(_ queued: QueuedMatrixEvent) -> [Action] {
        let place: EncryptedEventNotices.Place = configuration.decrypts ? .decryptingLinkedRoom : .linkedRoom
        guard isBridgedMatrixUser(queued.event.sender),
              let notice = encryptedNotices.take(queued.event, in: place, now: now) else { return [.dequeue(seq: queued.seq)] }
        let log = LogEntry(level: .info, message: "An encrypted Matrix event was not bridged; the room is told",
                           metadata: ["matrix.event.id": queued.event.eventID.rawValue, "matrix.encrypted.held_back": "\(notice.heldBack)"])
        return [.log(log), .postNotice(notice.text, subject: notice.subject), .dequeue(seq: queued.seq)]
    }
}

extension PortalStateMachine.XMPPFailure: CustomStringConvertible {
    var description: String {
        switch self {
        case .notConnected: "the XMPP server is not connected"
        case .timeout: "the XMPP server did not answer in time"
        case .refused(let error): error.text.map { "\(error.condition): \($0)" } ?? error.condition.rawValue
        case .other(let text): text
        }
    }
}

extension PortalStateMachine {
    /// A message, reaction or redaction the portal would act on (see ``matrixEvent(_:)``).
    func isBridgeableMessage(_ event: MatrixRoomEvent) -> Bool {
        configuration.isBridgeableMessage(event)
    }
}

extension PortalStateMachine.Configuration {
    /// A message, reaction or redaction the portal would act on: from a Matrix user the bridge mirrors, not a command,
    /// with something to say in the MUC. Pure.
    func isBridgeableMessage(_ event: MatrixRoomEvent) -> Bool {
        guard event.sender != botUserID && !isGhost(event.sender) else { return false }
        switch event.content {
        case .message(let msgtype, let body, _):
            return BridgeCommand.parse(msgtype: msgtype, body: body) == nil && MessageTranslation.toXMPP(msgtype: msgtype, body: body) != nil
        case .reaction, .redaction: return true
        case .member, .powerLevels, .topic, .tombstone, .encrypted, .encryptionEnabled: return false
        }
    }
}
