import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import Media
import XMPP

/// Matrix messages, edits, reactions and redactions to the MUC, exactly once: each is resolved against the message map,
/// translated, mapped (consuming its inbox row) before its stanza leaves from its sender's puppet, and its caption
/// follows a file; the MUC's bounces and refusals are told in the Matrix room; a Matrix moderator's redaction of an
/// XMPP message is asked of the room. A sub-machine of ``PortalStateMachine``: it owns the wait for a reflection a
/// Matrix event refers to, reads the room through the ``Room`` view handed in with each input, its actions reach the
/// ``Portal`` wrapped in ``PortalStateMachine/Action/xmppDelivery(_:)``, and what only the router can do (make a puppet
/// ready, stop or pause the drain) comes back as requests (``Request``).
struct XMPPDeliveryMachine: Sendable {
    typealias XMPPDelivery = PortalStateMachine.XMPPDelivery
    typealias XMPPFailure = PortalStateMachine.XMPPFailure
    typealias MediaUpload = PortalStateMachine.MediaUpload
    typealias ModerationJob = PortalStateMachine.ModerationJob
    typealias LogEntry = PortalStateMachine.LogEntry
    typealias MatrixTargets = PortalStateMachine.MatrixTargets

    let configuration: Configuration
    /// A Matrix event that refers to one of our messages the MUC has not reflected yet (no stanza-id to name it):
    /// the drain pauses until that reflection or the deadline.
    private(set) var receiptWait: PortalStateMachine.ReceiptWait?

    struct Configuration: Sendable {
        var room: RoomID
        var muc: JID
        var naming: BridgeNaming
        /// Signs the links by which XMPP clients fetch Matrix files; nil: media messages go as their text only.
        var mediaLinks: MediaLinkSigner?
        /// `media.xmpp_upload`: a media message's file is uploaded to the XMPP server first.
        var uploadsMedia: Bool
        /// Client mode: every message goes from the bridge's own occupant, its body in this format with the sender's
        /// name; nil: from the sender's puppet as written.
        var relay: RelayFormat? = nil
    }

    enum Input: Sendable, Equatable {
        /// A message, reaction or redaction from a Matrix user the bridge mirrors, from the inbox.
        case event(QueuedMatrixEvent)
        /// A run of the drain's plain messages (``isPlain(_:)``), in order, from senders whose puppets are in the
        /// MUC: mapped in one commit, then sent one after another (issue 26: one store round trip per batch).
        case plainRun([QueuedMatrixEvent])
        /// What the event refers to; nil when the store could not be read.
        case targetsResolved(QueuedMatrixEvent, MatrixTargets?)
        /// The file's GET URL on the XMPP server (nil: not uploaded; the bridge's own link goes instead).
        case mediaUploaded(MediaUpload, url: String?)
        /// Whether the mapping was new (false: mapped already, nothing to send); nil when the store failed.
        case mappingInserted(XMPPDelivery, inserted: Bool?)
        /// ``mappingInserted(_:inserted:)`` for a run: each delivery's answer, in order; nil when the store failed.
        case mappingsInserted([XMPPDelivery], inserted: [Bool]?)
        /// The sender's puppet is in the MUC as `occupant`.
        case puppetReady(XMPPDelivery, occupant: JID)
        /// The sender's puppet could not be made ready.
        case puppetFailed(XMPPDelivery, XMPPFailure)
        /// A groupchat message went out (nil) or why not.
        case groupchatSent(XMPPDelivery, XMPPFailure?)
        /// The room retracted the message (nil) or why not.
        case moderated(ModerationJob, XMPPFailure?)
        /// The MUC bounced a message with this origin-id, to one of our puppets.
        case bounced(OriginID, StanzaErrorInfo)
        /// The map entry of the bounced message (nil: none, or it could not be read).
        case ownMessageFound(OriginID, mapping: MessageMapping?, error: StanzaErrorInfo)
    }

    /// What the portal must do, in order; "→" marks the actions whose outcome (an ``Input``) the machine waits for.
    indirect enum Action: Sendable, Equatable {
        /// → ``Input/targetsResolved(_:_:)``: the mapped messages a Matrix event refers to (reply, edit, reaction,
        /// redaction) and the sender's reactions on a reaction's target.
        case resolveMatrixTargets(QueuedMatrixEvent)
        /// → ``Input/mediaUploaded(_:url:)``: the file is uploaded to the XMPP server's upload service.
        case uploadMedia(MediaUpload)
        /// → ``Input/mappingInserted(_:inserted:)``: maps a Matrix message before it goes out, consuming its inbox row
        /// (and recording the reaction change it makes, in the same commit).
        case insertMapping(MessageMapping, consumingInbox: Int64, delivery: XMPPDelivery, reaction: ReactionChange? = nil)
        /// → ``Input/mappingsInserted(_:inserted:)``: maps a run of plain messages in one commit, each consuming its
        /// inbox row.
        case insertMappings([MappingInsert])
        /// → ``Input/groupchatSent(_:_:)``: a groupchat message from a puppet (its occupant JID), with our origin-id.
        case sendGroupchat(XMPPDelivery, from: JID)
        /// A media message's caption, right behind the file it describes (its origin-id derived from the file's); a
        /// failure is logged, no outcome.
        case sendCaption(String, of: OriginID, from: JID)
        /// → ``Input/moderated(_:_:)``: a Matrix moderator's puppet asks the room to retract an XMPP message (XEP-0425).
        case moderate(ModerationJob)
        /// → ``Input/ownMessageFound(_:mapping:error:)``: the map entry of one of our messages the MUC bounced.
        case lookUpOwnMessage(OriginID, error: StanzaErrorInfo)
        /// One of our messages was refused by the MUC.
        case markFailed(OriginID)
        /// A notice from the bot in the Matrix room (idempotent per subject).
        case postNotice(String, subject: String)
        /// A handled inbox row is removed.
        case dequeue(seq: Int64)
        case log(LogEntry)

        /// Whether the machine waits for this action's outcome.
        var awaitsOutcome: Bool {
            switch self {
            case .resolveMatrixTargets, .uploadMedia, .insertMapping, .insertMappings, .sendGroupchat, .moderate, .lookUpOwnMessage: true
            case .sendCaption, .markFailed, .postNotice, .dequeue, .log: false
            }
        }
    }

    /// One message of ``Action/insertMappings(_:)``: its map row, the inbox row it consumes, and what goes out once it
    /// is mapped.
    struct MappingInsert: Sendable, Equatable {
        var mapping: MessageMapping
        var seq: Int64
        var delivery: XMPPDelivery
    }

    /// What the machine returns, in order: actions for the ``Portal``, and work only the router can do.
    typealias Output = SubMachineOutput<Action, Request>

    enum Request: Sendable, Equatable {
        /// The delivery's sender needs their puppet in the MUC; then ``Input/puppetReady(_:occupant:)`` or
        /// ``Input/puppetFailed(_:_:)``.
        case viaPuppet(XMPPDelivery)
        /// The MUC says the user's puppet is no longer an occupant.
        case puppetOut(UserID)
        /// The store failed: the drain stops and the inbox is tried again after a pause.
        case drainBlocked
        /// The XMPP side was unavailable: the drain stops, keeping the rest of the inbox.
        case xmppUnavailable(XMPPFailure)
        /// The drain pauses (the event stays first in the inbox) until the reflection it waits for, or this time.
        case pauseDrain(until: ContinuousClock.Instant)
        /// A resend found the XMPP side unavailable: the other resends of the round stop.
        case resendsStopped
        /// A puppet's message went out (its typing ends).
        case puppetSent(UserID, withBody: Bool)
    }

    /// What the machine may read of the room's model (kept by the portal machine), handed in with each input.
    struct Room {
        /// The XMPP users' ghosts in the Matrix room.
        var ghosts: [UserID: RoomGhost]
        /// The Matrix users' occupants in the MUC.
        var puppets: [UserID: Puppet]
        /// The Matrix users' per-room displaynames.
        var displaynames: [UserID: String]
        /// The XEP-0425 version the room speaks (nil: it does not moderate).
        var moderation: ModerationRequest.Version?

        /// The MUC nick a Matrix user is known by in the room: an XMPP user's joined ghost → that occupant's nick; a
        /// Matrix user → their puppet's nick. nil: not in the room.
        func mucNick(_ user: UserID) -> String? {
            if let ghost = ghosts[user], ghost.joined { return ghost.nick }
            return puppets[user]?.nick
        }

        /// The nick of the user's puppet (joined or not).
        func puppetNick(_ user: UserID) -> String? { puppets[user]?.nick }

        /// The occupant JID of the user's puppet when it is joined.
        func joinedPuppet(_ user: UserID) -> JID? { puppets[user].flatMap { $0.joined ? $0.occupant : nil } }

        /// The user's puppet's occupant JID, joined or not.
        func puppetOccupant(_ user: UserID) -> JID? { puppets[user]?.occupant }

        /// What the user goes by in the Matrix room.
        func name(_ user: UserID) -> String { displaynames[user] ?? user.localpart }

        /// What the relay calls the user: their name, told apart from namesakes (``RelayFormat/name(of:displaynames:)``).
        func relayName(_ user: UserID) -> String { RelayFormat.name(of: user, displaynames: displaynames) }
    }

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Takes one input; returns what to do, in order (an awaited action ends the batch).
    mutating func receive(_ input: Input, in room: Room, now: ContinuousClock.Instant) -> [Output] {
        switch input {
        case .event(let queued):
            if case .message(let msgtype, let body, let details) = queued.event.content {
                // `!isthmus` commands are for the bridge (SelfServiceDesk), never for the MUC.
                if BridgeCommand.parse(msgtype: msgtype, body: body) != nil { return [.perform(.dequeue(seq: queued.seq))] }
                if details?.replyTo == nil, details?.replaces == nil, !(configuration.uploadsMedia && details?.media != nil) {
                    return translate(queued, targets: MatrixTargets(), in: room, now: now)
                }
            }
            return [.perform(.resolveMatrixTargets(queued))]
        case .plainRun(let run):
            return mapRun(run, in: room, now: now)
        case .targetsResolved(let queued, let targets):
            guard let targets else { return [.portal(.drainBlocked)] }
            if let upload = mediaUpload(queued, targets: targets) { return [.perform(.uploadMedia(upload))] }
            return translate(queued, targets: targets, in: room, now: now)
        case .mediaUploaded(let upload, let url):
            var targets = upload.targets
            targets.uploadedURL = url
            return translate(upload.queued, targets: targets, in: room, now: now)
        case .mappingInserted(let delivery, let inserted):
            switch inserted {
            case nil: return [.portal(.drainBlocked)]   // the row is still queued; try again after a pause
            case false?: return []   // mapped already: bridged, or being resent from the map
            case true?: return [.portal(.viaPuppet(delivery))]
            }
        case .mappingsInserted(let deliveries, let inserted):
            guard let inserted else { return [.portal(.drainBlocked)] }   // the rows are still queued
            // Each in turn: the router keeps the sends after the first on its agenda (one awaited action at a time).
            return zip(deliveries, inserted).compactMap { delivery, inserted in inserted ? .portal(.viaPuppet(delivery)) : nil }
        case .puppetReady(let delivery, let occupant):
            return [.perform(.sendGroupchat(delivery, from: occupant))]
        case .puppetFailed(let delivery, let failure):
            return sendFailed(delivery, failure, in: room)
        case .groupchatSent(let delivery, let failure):
            guard let failure else {
                var outputs: [Output] = [.perform(sentLog(delivery))]
                if let caption = delivery.stanza.caption,
                   let occupant = configuration.relay == nil ? room.puppetOccupant(delivery.user) : configuration.naming.botOccupant {
                    outputs.append(.perform(.sendCaption(caption, of: delivery.originID, from: occupant)))
                }
                return outputs + [.portal(.puppetSent(delivery.user, withBody: delivery.stanza.body != nil))]
            }
            return sendFailed(delivery, failure, in: room)
        case .moderated(let job, let failure):
            return moderated(job, failure: failure, in: room)
        case .bounced(let originID, let error):
            return [.perform(.lookUpOwnMessage(originID, error: error))]
        case .ownMessageFound(let originID, let mapping, let error):
            return ownMessageRefused(originID, mapping: mapping, error: error, in: room)
        }
    }

    /// Whether a Matrix event may go in a run (``Input/plainRun(_:)``): a message that refers to nothing and has no file,
    /// so what it becomes needs nothing from the store — a map row and a stanza, or nothing at all (a command, an
    /// empty body). Pure.
    static func isPlain(_ event: MatrixRoomEvent) -> Bool {
        guard case .message(_, _, let details) = event.content else { return false }
        return details?.replyTo == nil && details?.replaces == nil && details?.media == nil
    }

    /// A run of plain messages: each translated as ``Input/event(_:)`` would, their map rows in one insert (the
    /// dequeues of those that become nothing go first: they depend on nothing).
    private mutating func mapRun(_ run: [QueuedMatrixEvent], in room: Room, now: ContinuousClock.Instant) -> [Output] {
        var outputs: [Output] = []
        var inserts: [MappingInsert] = []
        for queued in run {
            assert(Self.isPlain(queued.event), "only plain messages go in a run")
            for output in receive(.event(queued), in: room, now: now) {
                if case .perform(.insertMapping(let mapping, let seq, let delivery, nil)) = output {
                    inserts.append(MappingInsert(mapping: mapping, seq: seq, delivery: delivery))
                } else {
                    if case .perform(let action) = output { assert(!action.awaitsOutcome, "a plain message awaits only its mapping") }
                    outputs.append(output)
                }
            }
        }
        return inserts.isEmpty ? outputs : outputs + [.perform(.insertMappings(inserts))]
    }

    /// The MUC bounced one of our messages. `not-acceptable` means the puppet is no longer an occupant: rejoin and
    /// resend once. An error of type `wait` (a rate limit): the room's sends pause and the message goes again, first,
    /// at the inbox's retry — paced, never dropped. Anything else: the Matrix sender is told in the room.
    private func ownMessageRefused(_ originID: OriginID, mapping: MessageMapping?, error: StanzaErrorInfo, in room: Room) -> [Output] {
        guard let mapping, mapping.direction == .matrixToXMPP, mapping.state == .sending, let user = mapping.sender.matrixUser else {
            return []
        }
        if error.retryLater {
            // Still `sending`: the retry's look for undelivered messages resends it before the inbox goes on.
            return [.perform(.log(LogEntry(level: .notice, message: "The MUC asked the bridge to wait; the room's messages pause",
                                           metadata: ["xmpp.origin.id": originID.rawValue, "xmpp.error": error.condition.rawValue]))),
                    .portal(.drainBlocked)]
        }
        let log = Output.perform(.log(LogEntry(level: .warning, message: "The MUC refused a bridged message",
                                               metadata: ["xmpp.origin.id": originID.rawValue, "xmpp.error": error.condition.rawValue])))
        if error.condition == .notAcceptable, let stanza = OutgoingGroupchat(mapping: mapping), room.joinedPuppet(user) != nil {
            return [log, .portal(.puppetOut(user)),
                    .portal(.viaPuppet(XMPPDelivery(user: user, originID: originID, stanza: stanza, purpose: .afterRefusal(error))))]
        }
        return [log] + failed(user: user, originID: originID, reason: error.text.map { "\(error.condition): \($0)" } ?? error.condition.rawValue,
                              in: room)
    }

    /// One of our messages will never reach the MUC: recorded, and its Matrix sender told in the room.
    private func failed(user: UserID, originID: OriginID, reason: String, in room: Room) -> [Output] {
        [.perform(.markFailed(originID)),
         .perform(.postNotice("⚠️ \(room.name(user))'s message could not be delivered to the XMPP room (\(reason)).",
                              subject: "failed:\(originID.rawValue)"))]
    }

    /// Each Matrix → XMPP send, at debug level: with the reflections' stanza-ids (the server's order) these lines say
    /// in which order and on which path (drain, resend) messages went out.
    private func sentLog(_ delivery: XMPPDelivery) -> Action {
        var metadata = ["xmpp.origin.id": delivery.originID.rawValue, "matrix.user.id": delivery.user.rawValue]
        switch delivery.purpose {
        case .inbox(let seq):
            metadata["bridge.send.path"] = "inbox"
            metadata["matrix.inbox.seq"] = "\(seq)"
        case .resend: metadata["bridge.send.path"] = "resend"
        case .afterRefusal: metadata["bridge.send.path"] = "rejoin-resend"
        }
        return .log(LogEntry(level: .debug, message: "Sent a Matrix message to the MUC", metadata: metadata))
    }

    /// A Matrix → XMPP message did not go out.
    private func sendFailed(_ delivery: XMPPDelivery, _ failure: XMPPFailure, in room: Room) -> [Output] {
        switch delivery.purpose {
        case .inbox:
            if failure.isUnavailable { return [.portal(.xmppUnavailable(failure))] }
            return failed(user: delivery.user, originID: delivery.originID, reason: failure.description, in: room)
        case .resend:
            let log = Output.perform(.log(LogEntry(level: .warning,
                                                   message: failure.isUnavailable ? "Resend failed; the XMPP side is unavailable" : "Resend failed",
                                                   metadata: ["xmpp.origin.id": delivery.originID.rawValue, "error": "\(failure)"])))
            return failure.isUnavailable ? [log, .portal(.resendsStopped)] : [log]
        case .afterRefusal(let error):
            return [.perform(.log(LogEntry(level: .warning, message: "Resend after rejoin failed", metadata: ["error": "\(failure)"])))]
                + failed(user: delivery.user, originID: delivery.originID,
                         reason: error.text.map { "\(error.condition): \($0)" } ?? error.condition.rawValue, in: room)
        }
    }

    /// How long a Matrix event waits for the MUC to reflect the message it refers to.
    static let receiptWaitLimit: Duration = .seconds(10)

    /// The event refers to one of our messages the MUC has not reflected yet, so it has no stanza-id to name it
    /// (a reaction right after the message): the drain pauses — the event stays first in the inbox — until that
    /// reflection arrives or ``receiptWaitLimit`` passes; then the event is skipped (logged).
    mutating func waitForReceipt(of originID: OriginID, _ queued: QueuedMatrixEvent, now: ContinuousClock.Instant) -> [Output] {
        if let wait = receiptWait, wait.eventID == queued.event.eventID {
            guard now < wait.until else {
                receiptWait = nil
                return skipped(queued, "the message it refers to was not reflected by the MUC in time")
            }
        } else {
            receiptWait = PortalStateMachine.ReceiptWait(originID: originID, eventID: queued.event.eventID, until: now + Self.receiptWaitLimit)
        }
        return [.perform(.log(LogEntry(level: .debug, message: "A Matrix event waits for the MUC to reflect the message it refers to",
                                       metadata: ["matrix.event.id": queued.event.eventID.rawValue, "xmpp.origin.id": originID.rawValue]))),
                .portal(.pauseDrain(until: receiptWait!.until))]
    }

    /// The event that waited for a reflection goes on: the wait is over.
    mutating func endReceiptWait(for eventID: EventID) {
        if receiptWait?.eventID == eventID { receiptWait = nil }
    }
}
