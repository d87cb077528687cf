import IsthmusCommon
import IsthmusStore
import Media

/// Matrix → XMPP in DMs (RICH.md §12) as a machine in the portal's shape: for each queued event of a DM room the
/// ``DirectChats`` actor reads one ``DirectEventSnapshot``, feeds it here, performs the actions in order and feeds
/// their outcomes back (and for the events of one room handed over live, one ``DirectArrivalSnapshot``: whether they
/// go now, see ``arrived(_:in:_:)``). Every event ends in ``Action/consume(_:mapping:reaction:)`` (handled) or
/// ``Action/hold(_:)`` (it and its DM's later events wait in the inbox). What to send is ``DirectChatRules``'; this
/// adds whether the event waits for its linked room, the encrypted events' notices, and the private messages sent
/// lately (to place a bounce). Pure: no I/O, time passed in.
struct DirectChatMachine: Sendable {
    /// Naming (occupant JIDs, origin-ids) and the signer of file links (nil: media is not served).
    struct Configuration: Sendable {
        var naming: BridgeNaming
        var mediaLinks: MediaLinkSigner?
        /// `encryption.allow`: a ghost in an encrypted DM gets its encryption device (``GhostDevices``).
        var ghostDevices = false
    }

    enum Input: Sendable, Equatable {
        /// A queued event and its snapshot (nil: no longer to be handled).
        case event(QueuedMatrixEvent, DirectEventSnapshot?)
        /// ``Action/sendPrivate(_:)`` went out, or XMPP was not connected.
        case privateSent(PrivateDelivery, connected: Bool)
        /// ``Action/sendCaption(_:of:route:room:)`` went out with this origin-id.
        case captionSent(OriginID, room: RoomID)
        /// ``Action/postNotice(_:)`` was posted.
        case noticePosted(DirectNotice)
        /// ``Action/postNotice(_:)`` was refused: the ghost is not in the DM room.
        case noticeNotInRoom(DirectNotice)
        /// A DM's inbox row that does not decode.
        case undecodable(UndecodableInboxRow)
        /// The MUC bounced one of our private messages.
        case bounced(Bounce)
        /// The outcome of ``Action/readBouncedChat(_:in:)``: the DM the bounced message was sent from (nil: gone).
        case bouncedChatRead(Bounce, DirectChat?)
    }

    enum Action: Sendable, Equatable {
        /// A MUC private message from the Matrix user's occupant.
        case sendPrivate(PrivateDelivery)
        /// A file's caption right behind it (``XMPPLink/sendCaption(_:of:_:logger:)``).
        case sendCaption(String, of: OriginID, route: CaptionRoute, room: RoomID)
        /// An `m.notice` from the ghost in the DM room.
        case postNotice(DirectNotice)
        /// The ghost joins the DM room the Matrix user invited it into (a refusal is logged, not retried).
        case acceptInvite(DirectChat, room: RoomID)
        /// The ghost's encryption device is set up if it is not yet (best effort: a failure is logged, and the next
        /// encrypted event of the DM tries again). Before the ghost joins an encrypted DM, so the Matrix user's client
        /// finds the device when it shares its first message's key.
        case prepareDevice(ghost: UserID)
        /// Save `chat` (its DM room forgotten) and let the ghost leave `leaving`.
        case forgetRoom(DirectChat, leaving: RoomID)
        /// Record the event as handled and drop its inbox row, with the message map row of what it sent.
        case consume(QueuedMatrixEvent, mapping: MessageMapping? = nil, reaction: ReactionChange? = nil)
        /// The ghost joins the DM room (invited first where needed).
        case joinRoom(RoomID, ghost: UserID)
        /// The event stays queued, and its DM's later events behind it.
        case hold(RoomID)
        /// The inbox row is deleted, nothing recorded.
        case drop(seq: Int64)
        /// → ``Input/bouncedChatRead(_:_:)``: the stored DM of the room the bounced message was sent from.
        case readBouncedChat(Bounce, in: RoomID)
        case log(PortalStateMachine.LogEntry)
    }

    /// What ``DirectChats`` does with the events just queued in one DM room (``arrived(_:in:_:)``).
    enum ArrivalAction: Sendable, Equatable {
        /// Handle them now, in order, each with its own ``DirectEventSnapshot`` (→ ``Input/event(_:_:)``).
        case handle([QueuedMatrixEvent])
        /// Handle the DM room's queued events from the inbox, oldest first: the older ones, then these.
        case drain(RoomID)
    }

    /// A private message and what follows once it went out.
    struct PrivateDelivery: Sendable, Equatable {
        var item: QueuedMatrixEvent
        var from: JID
        var to: JID
        var body: String?
        var references: MessageReferences
        /// Derived from the event: a repeat after a crash carries the same.
        var originID: OriginID
        var mapping: MessageMapping
        var reaction: ReactionChange? = nil
        /// A file's caption, sent as a message of its own behind it.
        var caption: String? = nil
    }

    /// A private message of ours the MUC bounced, by its origin-id, with the nick it was for and the room's error.
    struct Bounce: Sendable, Equatable {
        var originID: OriginID
        var nick: String
        var error: StanzaErrorInfo
    }

    /// A notice in a DM room, and the event it answers (consumed once it is posted; nil: it answers no queued event,
    /// as a bounce's notice).
    struct DirectNotice: Sendable, Equatable {
        var text: String
        var room: RoomID
        var ghost: UserID
        /// Makes the notice's transaction id.
        var subject: String
        var item: QueuedMatrixEvent?
        /// The encrypted event this notice answers: recorded as noticed only once it is posted.
        var encrypted: Bool = false
        /// The ghost was found not in the room once and joined again (a second refusal keeps the event queued).
        var rejoined = false
    }

    static let unbridgedNotice = "⚠️ This conversation is no longer bridged to XMPP; the message was not delivered."
    static let recentlySentLimit = 500

    let configuration: Configuration
    /// Linked rooms whose portal is active (its puppets joined): their DMs' Matrix events can go out.
    private(set) var activeRooms: Set<RoomID> = []
    /// Encrypted events get a notice, at most one an hour per DM.
    private(set) var encryptedNotices = EncryptedEventNotices()
    /// The DM room of each private message sent lately, by origin-id, to place a bounce (most recent last; bounded).
    private var recentlySent: [(OriginID, RoomID)] = []

    init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// A linked room's portal changed status.
    mutating func linkStatus(_ room: RoomID, active: Bool) {
        if active { activeRooms.insert(room) } else { activeRooms.remove(room) }
    }

    /// Whether the events of a DM of `linkedRoom` wait for it: linked, and its portal not active (XMPP down, or its
    /// puppets not back in the MUC yet).
    private func waits(linkedRoom: RoomID, linked: Bool) -> Bool {
        linked && !activeRooms.contains(linkedRoom)
    }

    /// Events just queued in DM room `room` (`items`, oldest first), handed over live. They go at once unless older
    /// events of the room still wait in the inbox: these must not overtake them (an edit, reaction or redaction of a
    /// message not sent yet would find nothing to refer to), so the room is drained from the inbox in order — or,
    /// while its linked room is linked but not active, left to the drain that comes when it is (nothing).
    func arrived(_ items: [QueuedMatrixEvent], in room: RoomID, _ snapshot: DirectArrivalSnapshot) -> [ArrivalAction] {
        guard snapshot.olderQueued else { return [.handle(items)] }
        if let linkedRoom = snapshot.linkedRoom, waits(linkedRoom: linkedRoom, linked: snapshot.linkedRoomIsLinked) { return [] }
        return [.drain(room)]
    }

    /// The DM room the private message with `originID` was sent in, if it was sent lately.
    private func room(sentAs originID: OriginID) -> RoomID? {
        recentlySent.last { $0.0 == originID }?.1
    }

    mutating func receive(_ input: Input, now: ContinuousClock.Instant) -> [Action] {
        switch input {
        case .event(let item, let snapshot):
            guard let snapshot else { return [] }
            return handle(item, snapshot, now: now)
        case .undecodable(let row):
            return [.log(row.dropped), .drop(seq: row.seq)]
        case .privateSent(let delivery, let connected):
            let room = delivery.item.event.room
            guard connected else {
                return [.log(.init(level: .notice, message: "XMPP is not connected; the DM message waits",
                                   metadata: ["matrix.event.id": delivery.item.event.eventID.rawValue])), .hold(room)]
            }
            remember(delivery.originID, in: room)
            let consume = Action.consume(delivery.item, mapping: delivery.mapping, reaction: delivery.reaction)
            guard let caption = delivery.caption else { return [consume] }
            return [.sendCaption(caption, of: delivery.originID, route: .chat(from: delivery.from, to: delivery.to), room: room), consume]
        case .captionSent(let originID, let room):
            remember(originID, in: room)
            return []
        case .noticePosted(let notice):
            guard let item = notice.item else { return [] }
            if notice.encrypted { encryptedNotices.record(item.event, noticed: true, now: now) }
            return [.consume(item)]
        case .noticeNotInRoom(let notice):
            // Its user is in the room (it answers their event, or their message bounced): the ghost joins and posts
            // once more.
            guard !notice.rejoined else {
                guard notice.item != nil else {
                    return [.log(.init(level: .error, message: "The ghost may not post in the DM room; a bounce was not told",
                                       metadata: ["matrix.dm.id": notice.room.rawValue]))]
                }
                return [.log(.init(level: .error, message: "The ghost may not post in the DM room; the event waits",
                                   metadata: ["matrix.dm.id": notice.room.rawValue])), .hold(notice.room)]
            }
            var again = notice
            again.rejoined = true
            return [.joinRoom(notice.room, ghost: notice.ghost), .postNotice(again)]
        case .bounced(let bounce):
            guard let room = room(sentAs: bounce.originID) else {
                return [.log(.init(level: .notice, message: "A private message bounced that the bridge no longer places",
                                   metadata: ["xmpp.origin.id": bounce.originID.rawValue]))]
            }
            return [.readBouncedChat(bounce, in: room)]
        case .bouncedChatRead(let bounce, let chat):
            guard let chat, let dm = chat.matrixRoom else { return [] }
            return [.postNotice(DirectNotice(text: DirectChatRules.bounceNotice(nick: bounce.nick, error: bounce.error), room: dm,
                                             ghost: chat.ghost, subject: "bounce:\(bounce.originID.rawValue)", item: nil))]
        }
    }

    private mutating func handle(_ item: QueuedMatrixEvent, _ snapshot: DirectEventSnapshot, now: ContinuousClock.Instant) -> [Action] {
        let event = item.event
        guard let chat = snapshot.chat else { return [.consume(item)] }
        let step = DirectChatRules.step(for: event, chat: chat, occupant: snapshot.occupant, targets: snapshot.targets,
                                        userNick: snapshot.userNick, mediaLinks: configuration.mediaLinks)
        let subject = "dm:\(event.eventID.rawValue)"
        switch step {
        case .sendPrivate, .sendFile, .notice:
            guard !activeRooms.contains(chat.linkedRoom) else { break }
            if waits(linkedRoom: chat.linkedRoom, linked: snapshot.linkedRoomIsLinked) { return [.hold(event.room)] }
            // Unlinked: nothing will carry it any more; say so rather than keep it forever.
            return notice(Self.unbridgedNotice, in: chat, subject: subject, answering: item, now: now)
        case .ignore, .forgetRoom, .acceptInvite, .encrypted:
            break
        }
        switch step {
        case .ignore:
            return [.consume(item)]
        case .encrypted:
            // Needs the homeserver only: told at once, whatever the XMPP side's state.
            let device: [Action] = configuration.ghostDevices ? [.prepareDevice(ghost: chat.ghost)] : []
            let place: EncryptedEventNotices.Place = configuration.ghostDevices ? .decryptingDirectChat : .directChat
            guard let notice = encryptedNotices.notice(for: event, in: place, now: now) else {
                encryptedNotices.record(event, noticed: false, now: now)
                return device + [.consume(item)]
            }
            return device + [.log(.init(level: .info, message: "An encrypted Matrix event in a DM was not bridged; the DM is told",
                               metadata: ["matrix.event.id": event.eventID.rawValue, "matrix.encrypted.held_back": "\(notice.heldBack)"]))]
                + self.notice(notice.text, in: chat, subject: notice.subject, answering: item, encrypted: true, now: now)
        case .sendPrivate(let to, let send):
            return deliver(item, body: send.stanza.body, references: send.stanza.references, to: to, chat: chat,
                           mapping: mapping(of: event, in: chat, kind: send.kind, target: send.target, excerpt: send.excerpt),
                           reaction: send.reaction)
        case .sendFile(let to, let file, let caption):
            return deliver(item, body: file.url, references: MessageReferences(file: file), to: to, chat: chat,
                           mapping: mapping(of: event, in: chat, kind: .message, target: nil, excerpt: nil), caption: caption)
        case .notice(let text):
            return notice(text, in: chat, subject: subject, answering: item, now: now)
        case .acceptInvite:
            let device: [Action] = configuration.ghostDevices && event.invitedToEncryptedRoom == true ? [.prepareDevice(ghost: chat.ghost)] : []
            return device + [.acceptInvite(chat, room: event.room), .consume(item)]
        case .forgetRoom:
            var forgotten = chat
            forgotten.matrixRoom = nil
            return [.forgetRoom(forgotten, leaving: event.room), .consume(item)]
        }
    }

    /// A private message from the Matrix user's occupant; with no occupant JID for the user nothing goes, and the
    /// event is consumed as sent.
    private func deliver(_ item: QueuedMatrixEvent, body: String?, references: MessageReferences, to: JID, chat: DirectChat,
                         mapping: MessageMapping, reaction: ReactionChange? = nil, caption: String? = nil) -> [Action] {
        guard let from = configuration.naming.puppetJID(for: chat.matrixUser) else {
            return [.consume(item, mapping: mapping, reaction: reaction)]
        }
        return [.sendPrivate(PrivateDelivery(item: item, from: from, to: to, body: body, references: references,
                                             originID: configuration.naming.privateOriginID(for: item.event.eventID),
                                             mapping: mapping, reaction: reaction, caption: caption))]
    }

    /// A notice in the DM room; a DM without a room has nowhere to post it, and the event is consumed as answered.
    private mutating func notice(_ text: String, in chat: DirectChat, subject: String, answering item: QueuedMatrixEvent,
                                 encrypted: Bool = false, now: ContinuousClock.Instant) -> [Action] {
        guard let room = chat.matrixRoom else {
            if encrypted { encryptedNotices.record(item.event, noticed: true, now: now) }
            return [.consume(item)]
        }
        return [.postNotice(DirectNotice(text: text, room: room, ghost: chat.ghost, subject: subject, item: item, encrypted: encrypted))]
    }

    /// The message map row of the private message `event` went out as (delivered: a private message has no
    /// reflection to wait for): edits, reactions and retractions in the DM find it, and an XMPP user's by its id.
    private func mapping(of event: MatrixRoomEvent, in chat: DirectChat, kind: MessageMapping.Kind, target: EventID?,
                         excerpt: String?) -> MessageMapping {
        let originID = configuration.naming.privateOriginID(for: event.eventID)
        return MessageMapping(room: event.room, eventID: event.eventID, stanzaID: nil, originID: originID, direction: .matrixToXMPP,
                              sender: .matrix(chat.matrixUser), state: .delivered, kind: kind,
                              xmppID: StanzaAttributeID(originID.rawValue), target: target, excerpt: excerpt)
    }

    private mutating func remember(_ originID: OriginID, in room: RoomID) {
        recentlySent.append((originID, room))
        if recentlySent.count > Self.recentlySentLimit { recentlySent.removeFirst(recentlySent.count - Self.recentlySentLimit) }
    }
}
