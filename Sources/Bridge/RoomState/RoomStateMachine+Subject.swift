import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The MUC subject ↔ the Matrix topic, and the MUC name → the Matrix name (links made with `--sync-name`)
/// (RICH.md §9; XEP-0045 §8.1, §10.2).
///
/// The subject both sides last agreed on is kept per link (``RoomTexts``): a subject the room sends on join, our own
/// change reflected, or a Matrix topic equal to it is not a change, so nothing loops and restarts re-apply nothing.
extension RoomStateMachine {
    // MARK: XMPP → Matrix

    /// A MUC message with a subject and no body: a change by an occupant, the subject sent on join, or the reflection
    /// of our own change. Only a text that differs from the one both sides agree on is applied (an archived subject
    /// is history: the live one sent on join says what is current).
    mutating func subjectMessage(_ message: RoomMessage, subject: String, in room: Room) -> [Action] {
        guard !message.fromArchive else { return [] }
        let ours = room.isOurOccupant(message.nick)
        var announce: [Action] = []
        if ours, let pending = pendingSubject, pending.text == subject {
            pendingSubject = nil
            // The bridge's occupant set it for a Matrix user: the MUC is told who, by the name they go by there.
            if pending.byBridge, message.nick == room.botNick {
                // The id is the change's, so a repeat after a crash is recognisable as the same line.
                let id = OriginID(pending.id.rawValue + "-announce") ?? pending.id
                announce = [.announceInMUC("\(room.nameInMUC(pending.user)) changed the subject.", originID: id)]
            }
        }
        if texts?.subject == subject { return announce }
        // Our own change reflected, or nothing known yet and nothing to say: it is now what both sides agree on.
        if ours || (texts?.subject == nil && subject.isEmpty) {
            texts = RoomTexts(subject: subject, name: texts?.name)
            return [.recordSubject(subject)] + announce
        }
        // A delayed subject is the one sent on join (set earlier, maybe by someone long gone): nobody is named.
        let setter = message.nick.isEmpty || message.delay != nil ? nil : message.nick
        return [.setMatrixTopic(TopicChange(text: subject, actor: room.joinedGhost(message.nick) ?? configuration.botUserID,
                                            setter: setter))]
    }

    /// The topic was set, or refused: a ghost without the power hands over to the bot, which says who changed it.
    mutating func topicSet(_ change: TopicChange, failure: MatrixFailure?) -> [Action] {
        switch failure {
        case nil:
            texts = RoomTexts(subject: change.text, name: texts?.name)
            var actions: [Action] = [.recordSubject(change.text)]
            if change.actor == configuration.botUserID, let setter = change.setter {
                actions.append(.postNotice("\(setter) changed the XMPP room's subject.", subject: "subject:\(setter):\(change.text)"))
            }
            return actions
        case .refused(let reason)?:
            guard change.actor != configuration.botUserID else {
                return [.log(LogEntry(level: .warning, message: "The Matrix room refused the bridge's topic change",
                                      metadata: ["error": reason]))]
            }
            var byBot = change
            byBot.actor = configuration.botUserID
            return [.setMatrixTopic(byBot)]
        case .unavailable(let reason)?:
            // Not recorded: the subject sent on the next join differs from what is known, and is applied then.
            return [.log(LogEntry(level: .warning, message: "Could not set the Matrix topic", metadata: ["error": reason]))]
        }
    }

    // MARK: Matrix → XMPP

    /// A Matrix user changed the topic: their puppet sets the MUC subject (a topic equal to the known subject — our
    /// own echo, or a no-op — is not sent).
    func matrixTopic(_ queued: QueuedMatrixEvent, text: String, in room: Room) -> [Output] {
        let event = queued.event
        guard room.isBridged(event.sender), texts?.subject != text else { return [.perform(.dequeue(seq: queued.seq))] }
        let change = SubjectChange(text: text, user: event.sender, eventID: event.eventID,
                                   id: configuration.naming.originID(for: event.eventID), seq: queued.seq)
        return [.portal(.ensurePuppet(change))]
    }

    /// The change goes out (from the puppet, or the bridge's occupant for its retry); the room's reflection (or its
    /// error) follows as an event.
    mutating func sendSubject(_ change: SubjectChange, in room: Room) -> [Output] {
        let occupant = change.byBridge ? configuration.naming.botOccupant : room.puppetOccupant(change.user)
        guard let occupant else { return subjectSent(change, failure: .other("no occupant for \(change.user)"), in: room) }
        pendingSubject = change
        return [.perform(.sendSubject(change, from: occupant))]
    }

    /// The stanza went out (its inbox row is then handled) or did not.
    mutating func subjectSent(_ change: SubjectChange, failure: XMPPFailure?, in room: Room) -> [Output] {
        guard let failure else { return change.seq.map { [.perform(.dequeue(seq: $0))] } ?? [] }
        if pendingSubject == change { pendingSubject = nil }
        return subjectNotSent(change, failure, in: room)
    }

    /// The change could not go out: a wait for the XMPP side (the row stays), or a notice.
    func subjectNotSent(_ change: SubjectChange, _ failure: XMPPFailure, in room: Room) -> [Output] {
        if failure.isUnavailable, change.seq != nil { return [.portal(.xmppUnavailable(failure))] }
        return (subjectNotice(change, reason: failure.description, in: room) + (change.seq.map { [.dequeue(seq: $0)] } ?? [])).map(Output.perform)
    }

    /// The room refused a subject change of ours. A `forbidden` one from the user's puppet is tried once more by the
    /// bridge's own occupant — the room accepts it when that occupant is a moderator (XEP-0045 §8.1; the room, not
    /// the bridge, knows the roles that count); otherwise the Matrix room is told why.
    mutating func subjectRefused(_ change: SubjectChange, error: StanzaErrorInfo, in room: Room) -> [Output] {
        pendingSubject = nil
        let log = Output.perform(.log(LogEntry(level: .notice, message: "The MUC refused a subject change",
                                               metadata: ["xmpp.error": error.condition.rawValue, "matrix.event.id": change.eventID.rawValue,
                                                          "bridge": "\(change.byBridge)"])))
        if error.condition == .forbidden, !change.byBridge, room.botJoined {
            var retry = change
            retry.byBridge = true
            retry.seq = nil
            retry.id = OriginID(change.id.rawValue + "-bridge") ?? change.id
            return [log] + sendSubject(retry, in: room)
        }
        let reason = error.condition == .forbidden
            ? "only its moderators may change the subject there"
            : error.text.map { "\(error.condition): \($0)" } ?? error.condition.rawValue
        return [log] + subjectNotice(change, reason: reason, in: room).map(Output.perform)
    }

    private func subjectNotice(_ change: SubjectChange, reason: String, in room: Room) -> [Action] {
        [.postNotice("⚠️ \(room.nameInMatrix(change.user))'s topic change was not applied to the XMPP room (\(reason)).",
                     subject: "subject-refused:\(change.eventID.rawValue)")]
    }

    // MARK: Name

    /// For links made with `--sync-name`: the MUC's name goes to the Matrix room when it differs from the one copied
    /// last (known once the room's state is loaded).
    mutating func syncRoomName(in room: Room) -> [Action] {
        guard configuration.syncName, let known = texts, let name = room.announcedName, name != known.name else { return [] }
        texts?.name = name
        return [.setMatrixRoomName(name)]
    }
}
