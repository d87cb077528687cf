import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The room itself: the MUC subject ↔ the Matrix topic, the MUC name → the Matrix name (links made with
/// `--sync-name`), and the MUC's destruction (RICH.md §9; XEP-0045 §8.1, §10.2, §10.9).
///
/// The subject both sides last agreed on is kept per link (``RoomTexts``): a subject the room sends on join, our own
/// change reflected, or a Matrix topic equal to it is not a change, so nothing loops and restarts re-apply nothing.
extension PortalStateMachine {
    /// A Matrix topic to set, and who sets it.
    struct TopicChange: Sendable, Equatable {
        var text: String
        /// The ghost of the occupant who changed the subject, or the bot (when the occupant has no ghost in the room,
        /// the room itself set it, or the ghost lacks the power).
        var actor: UserID
        /// The nick of the occupant who changed it (nil: the room, or a subject sent on join), named in a notice when
        /// the bot sets the topic.
        var setter: String?
    }

    /// A Matrix user's topic change on its way to the MUC as a subject change.
    struct SubjectChange: Sendable, Equatable {
        var text: String
        var user: UserID
        var eventID: EventID
        /// The stanza `id` the room's reflection or error will carry.
        var id: OriginID
        /// The inbox row, until it is handled; nil for the bridge's own retry.
        var seq: Int64?
        /// Whether the bridge's own occupant sends it (after the room refused the user's occupant).
        var byBridge = false
    }

    // MARK: XMPP → Matrix

    /// A MUC message with a subject and no body: a change by an occupant, the subject sent on join, or the reflection
    /// of our own change. Only a text that differs from the one both sides agree on is applied (an archived subject
    /// is history: the live one sent on join says what is current).
    mutating func subjectMessage(_ message: RoomMessage, subject: String) -> [Action] {
        guard !message.fromArchive else { return [] }
        let ours = isOurOccupant(nick: message.nick, realJID: nil)
        var announce: [Action] = []
        if ours, let pending = pendingSubject, pending.text == subject {
            pendingSubject = nil
            // The bridge's occupant set it for a Matrix user: the MUC is told who, by the name they go by there.
            if pending.byBridge, message.nick == botNick {
                let name = puppets[pending.user]?.nick ?? displaynames[pending.user] ?? pending.user.localpart
                // The id is the change's, so a repeat after a crash is recognisable as the same line.
                let id = OriginID(pending.id.rawValue + "-announce") ?? pending.id
                announce = [.announceInMUC("\(name) changed the subject.", originID: id)]
            }
        }
        if roomTexts?.subject == subject { return announce }
        // Our own change reflected, or nothing known yet and nothing to say: it is now what both sides agree on.
        if ours || (roomTexts?.subject == nil && subject.isEmpty) {
            roomTexts = RoomTexts(subject: subject, name: roomTexts?.name)
            return [.recordSubject(subject)] + announce
        }
        let ghost = occupants[message.nick]?.ghost.flatMap { ghosts[$0]?.joined == true ? $0 : nil }
        // A delayed subject is the one sent on join (set earlier, maybe by someone long gone): nobody is named.
        let setter = message.nick.isEmpty || message.delay != nil ? nil : message.nick
        return [.setMatrixTopic(TopicChange(text: subject, actor: ghost ?? configuration.botUserID, setter: setter))]
    }

    /// The topic was set, or refused: a ghost without the power hands over to the bot, which says who changed it.
    mutating func topicSet(_ change: TopicChange, failure: MatrixFailure?) -> [Action] {
        switch failure {
        case nil:
            roomTexts = RoomTexts(subject: change.text, name: roomTexts?.name)
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
    mutating func matrixTopic(_ queued: QueuedMatrixEvent, text: String) -> [Action] {
        let event = queued.event
        guard isBridgedMatrixUser(event.sender), roomTexts?.subject != text else { return [.dequeue(seq: queued.seq)] }
        let change = SubjectChange(text: text, user: event.sender, eventID: event.eventID,
                                   id: configuration.naming.originID(for: event.eventID), seq: queued.seq)
        return ensurePuppet(event.sender, then: .subject(change))
    }

    /// The change goes out (from the puppet, or the bridge's occupant for its retry); the room's reflection (or its
    /// error) follows as an event.
    mutating func sendSubject(_ change: SubjectChange) -> [Action] {
        let occupant = change.byBridge ? configuration.naming.botOccupant : puppets[change.user]?.occupant
        guard let occupant else { return subjectSent(change, failure: .other("no occupant for \(change.user)")) }
        pendingSubject = change
        return [.sendSubject(change, from: occupant)]
    }

    /// The stanza went out (its inbox row is then handled) or did not.
    mutating func subjectSent(_ change: SubjectChange, failure: XMPPFailure?) -> [Action] {
        guard let failure else { return change.seq.map { [.dequeue(seq: $0)] } ?? [] }
        if pendingSubject == change { pendingSubject = nil }
        return subjectNotSent(change, failure)
    }

    /// The change could not go out: a wait for the XMPP side (the row stays), or a notice.
    mutating func subjectNotSent(_ change: SubjectChange, _ failure: XMPPFailure) -> [Action] {
        if failure.isUnavailable, change.seq != nil { return unavailableDuringDrain(failure) }
        return subjectNotice(change, reason: failure.description) + (change.seq.map { [.dequeue(seq: $0)] } ?? [])
    }

    /// The room refused a subject change of ours. A `forbidden` one from the user's puppet is tried once more by the
    /// bridge's own occupant — the room accepts it when that occupant is a moderator (XEP-0045 §8.1; the room, not
    /// the bridge, knows the roles that count); otherwise the Matrix room is told why.
    mutating func subjectRefused(_ change: SubjectChange, error: StanzaErrorInfo) -> [Action] {
        pendingSubject = nil
        let log = Action.log(LogEntry(level: .notice, message: "The MUC refused a subject change",
                                      metadata: ["xmpp.error": error.condition.rawValue, "matrix.event.id": change.eventID.rawValue,
                                                 "bridge": "\(change.byBridge)"]))
        if error.condition == .forbidden, !change.byBridge, botJoined {
            var retry = change
            retry.byBridge = true
            retry.seq = nil
            retry.id = OriginID(change.id.rawValue + "-bridge") ?? change.id
            return [log] + sendSubject(retry)
        }
        let reason = error.condition == .forbidden
            ? "only its moderators may change the subject there"
            : error.text.map { "\(error.condition): \($0)" } ?? error.condition.rawValue
        return [log] + subjectNotice(change, reason: reason)
    }

    private func subjectNotice(_ change: SubjectChange, reason: String) -> [Action] {
        let name = displaynames[change.user] ?? change.user.localpart
        return [.postNotice("⚠️ \(name)'s topic change was not applied to the XMPP room (\(reason)).",
                            subject: "subject-refused:\(change.eventID.rawValue)")]
    }

    // MARK: Name

    /// The MUC's configuration changed (status 104): its name or avatar may have, so disco#info is read again.
    mutating func configurationChanged() -> [Action] {
        botJoined ? [.readRoomFeatures] : []
    }

    /// For links made with `--sync-name`: the MUC's name goes to the Matrix room when it differs from the one copied
    /// last (known once the room's state is loaded).
    mutating func syncRoomName() -> [Action] {
        guard configuration.syncName, let texts = roomTexts, let name = roomFeatures?.name, name != texts.name else { return [] }
        roomTexts?.name = name
        return [.setMatrixRoomName(name)]
    }

    // MARK: Destruction

    /// The MUC was destroyed (XEP-0045 §10.9): the link goes to `error` with the reason, the Matrix room is told —
    /// naming the alternate venue as an `xmpp:` URI, the address its people need — and the bridge stays out of the
    /// MUC (joining again would create a new room under the same address), also after a restart (recorded with the link).
    mutating func roomDestroyed(_ destruction: RoomDestruction) -> [Action] {
        guard !destroyed else { return [] }
        destroyed = true
        botJoined = false
        for user in puppets.keys { puppets[user]?.joined = false }
        agenda.removeAll()
        drain = nil
        var detail = "the XMPP room was destroyed"
        var notice = "⚠️ The XMPP room was destroyed"
        if let reason = destruction.reason {
            detail += ": \(reason)"
            notice += " (reason: \(reason))"
        }
        notice += ". This room is no longer bridged."
        if let venue = destruction.alternateVenue {
            detail += "; alternate venue xmpp:\(venue.bare)?join"
            notice += " The conversation continues at xmpp:\(venue.bare)?join"
        }
        return [.log(LogEntry(level: .notice, message: "The MUC was destroyed",
                              metadata: ["xmpp.alternate_venue": destruction.alternateVenue?.description ?? "-"])),
                .recordDestruction(detail: detail),
                .postNotice(notice, subject: "destroyed:\(configuration.muc.bare)")]
    }
}
