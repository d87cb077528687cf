import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import Synchronization

/// MUC private messages ↔ Matrix DM rooms (RICH.md §12): one actor for every DM, handling its work one item at a
/// time in arrival order from one queue (DMs are few and light; one order is simple and enough).
///
/// - XMPP → Matrix: a portal hands over a private message to one of its Matrix users' occupants (it knows who the
///   sender is: the same identity and ghost as in the linked room). The DM room of (linked room, ghost, Matrix user)
///   is created by the ghost when there is none — recorded before and after the `createRoom` call — and the message
///   is sent in it by the ghost, with a txnId derived from the stanza's id.
/// - Matrix → XMPP: events of DM rooms are written to the durable inbox with the homeserver transaction (like a linked
///   room's) and handed here; each is handled (a private message from the user's occupant to the ghost's occupant's
///   current nick, or a notice back) and then removed. After a crash in between, the message is sent again with the
///   same origin-id (XMPP private messages have no reflection that could serve as a receipt).
///   They wait while the linked room's portal is not active (after a start, until its puppets have rejoined the MUC).
/// - A private message the MUC bounces comes back here (by its origin-id) as a notice in the DM.
///
/// Matrix → XMPP is decided by ``DirectChatMachine`` (one store read per event, then its actions performed). What
/// to send from XMPP is ``DirectChatRules``' (pure functions); the rest of that way this actor still decides itself,
/// between its store and homeserver calls: whether a DM room is still usable or a new one is opened, what a body-less
/// message with no DM refers to, and the retries.
actor DirectChats {
    /// One piece of work.
    enum Work: Sendable {
        /// A private message from XMPP, from the portal of `linkedRoom`.
        case fromXMPP(DirectChatRules.Inbound, linkedRoom: RoomID, muc: JID)
        /// Events of DM rooms just written to the durable inbox.
        case matrixEvents([QueuedMatrixEvent])
        /// A linked room's portal changed status: its DMs' Matrix events go out only while it is active (its puppets
        /// are in the MUC then); becoming active, the ones still queued in the store go out.
        case linkStatus(RoomID, RoomLink.Status)
        /// The MUC bounced one of our private messages.
        case bounced(originID: OriginID, nick: String, error: StanzaErrorInfo)
        /// The ghost leaves (or declines the invitation to) a room: an invite it cannot take, or a DM room the Matrix
        /// user replaced by inviting it into a new one.
        case leave(RoomID, ghost: UserID, reason: String?)
    }

    /// The store and both links (its `directChats` is nil: this actor is the one).
    let context: BridgeContext
    /// `bridge.dm`.
    let logger: Logger
    private let work: AsyncStream<Work>
    private let feed: AsyncStream<Work>.Continuation
    /// Matrix → XMPP's decisions, and what they remember: the active linked rooms, the encrypted events' notices,
    /// the private messages sent lately.
    var machine: DirectChatMachine
    /// Which declined invitations get a log line (anyone on Matrix can invite a ghost: one line a minute at most).
    let declineLog = Mutex(RefusalLogLimiter())
    static let declineLogKey = RefusalLogLimiter.Key(address: "matrix", reason: "dm_invitation_declined")

    init(context: BridgeContext) {
        self.context = context
        logger = context.logger.with(label: "bridge.dm")
        machine = DirectChatMachine(configuration: .init(naming: context.naming, mediaLinks: context.media?.signer))
        (work, feed) = AsyncStream.makeStream(of: Work.self)
    }

    /// Queues work. Safe from any context.
    nonisolated func enqueue(_ item: Work) {
        feed.yield(item)
    }

    /// Ends ``run()`` after the work already queued (unless its task is cancelled first, as at the bridge's shutdown:
    /// then what is left is dropped, and Matrix events wait in the durable inbox).
    nonisolated func finish() {
        feed.finish()
    }

    /// Handles work until ``finish()``.
    func run() async {
        for await item in work {
            switch item {
            case .fromXMPP(let inbound, let linkedRoom, let muc): await deliverToMatrix(inbound, linkedRoom: linkedRoom, muc: muc)
            case .matrixEvents(let queued): await handleArrived(queued)
            case .linkStatus(let room, let status):
                machine.linkStatus(room, active: status == .active)
                if status == .active { await drain(linkedRoom: room) }
            case .bounced(let originID, let nick, let error): await bounced(originID, nick: nick, error: error)
            case .leave(let room, let ghost, let reason): await leave(room, as: ghost, reason: reason)
            }
        }
    }

    // MARK: XMPP → Matrix

    private func deliverToMatrix(_ inbound: DirectChatRules.Inbound, linkedRoom: RoomID, muc: JID) async {
        let metadata: Logger.Metadata = ["matrix.room.id": linkedRoom.rawValue, "matrix.user.id": inbound.user.rawValue,
                                         "xmpp.nick": inbound.nick]
        do {
            let room: RoomID
            if inbound.message.body == nil {
                // A reaction set or a retraction refers to a message of the DM there is; with none it refers to nothing
                // (and opens no room: an empty one would only invite the user to nothing).
                guard let existing = try await context.store.directChat(linkedRoom: linkedRoom, ghost: inbound.ghost, user: inbound.user)?.matrixRoom else {
                    logger.debug("A body-less private message with no DM to refer to ignored", metadata: metadata)
                    return
                }
                room = existing
            } else {
                room = try await directRoom(for: inbound, linkedRoom: linkedRoom, muc: muc)
            }
            let targets = try await context.store.xmppTargets(of: inbound.message, in: room)
            let key = inbound.stanzaID ?? UUID().uuidString
            let plan = DirectChatRules.plan(inbound, in: room, targets: targets) { part in
                self.context.naming.privateTxnID(muc: muc, identity: inbound.identity, stanzaID: part.map { key + "\u{0}" + $0 } ?? key)
            }
            guard case .send(let sends, let record, let reactions) = plan else {
                if case .ignore(let reason) = plan {
                    // Debug: anyone in the room can send these, as often as they like.
                    logger.debug("Private message not bridged", metadata: metadata.merging(["reason": reason]) { $1 })
                }
                return
            }
            let eventIDs = try await retrying {
                try await self.context.matrix.perform(sends, as: inbound.ghost, in: room, timestamp: nil) {
                    try await self.importedFile($0, fallback: $1, ghost: inbound.ghost)
                }
            }
            let (bridged, change) = PortalStateMachine.recorded(record, reactions, eventIDs: eventIDs)
            // Mapped so later corrections, retractions and reactions in the DM find it; a repeat maps nothing new.
            try await context.durably { try await self.context.store.recordBridgedFromXMPP(bridged, reactions: change) }
            logger.debug("Private message bridged to a DM", metadata: metadata.merging(["matrix.dm.id": room.rawValue,
                                                                                        "kind": bridged.kind.rawValue]) { $1 })
        } catch {
            logger.error("Could not bridge a private message to Matrix",
                         metadata: metadata.merging(["error": "\(MessageTranslation.describe(error))"]) { $1 })
        }
    }

    /// An XMPP user's file as a Matrix media message (fetched and uploaded as the ghost, see ``MediaImporter``), or
    /// `fallback` (the link as text) when media is not bridged or the file cannot be (the reason is logged). Throws
    /// while the homeserver cannot take the upload (the private message is then retried like a send).
    private func importedFile(_ link: XMPPFileLink, fallback: OutgoingMatrixMessage, ghost: UserID) async throws -> OutgoingMatrixMessage {
        guard let importer = context.mediaImporter else { return fallback }
        let (message, declined) = try await importer.message(sharing: link, fallback: fallback, as: ghost)
        if let declined { logger.info("An XMPP file in a private message is bridged as a link", metadata: ["reason": declined]) }
        return message
    }

    /// The pair's DM room, created by the ghost (inviting the Matrix user) when there is none. The pair is recorded
    /// before the room is created, and the room as soon as it is: a failure in between is retried on the same row.
    private func directRoom(for inbound: DirectChatRules.Inbound, linkedRoom: RoomID, muc: JID) async throws -> RoomID {
        let store = context.store
        var chat = try await store.directChat(linkedRoom: linkedRoom, ghost: inbound.ghost, user: inbound.user)
            ?? DirectChat(linkedRoom: linkedRoom, identity: inbound.identity, matrixUser: inbound.user, muc: muc, ghost: inbound.ghost)
        if let room = chat.matrixRoom {
            // The leave may not have reached the bridge yet (it comes with a homeserver transaction, this from XMPP):
            // a message into a room the user left would be lost, so ask. A refusal (the ghost is not in it either)
            // counts as gone too.
            let membership: Membership?
            do {
                membership = try await retrying { try await self.context.matrix.membership(of: inbound.user, in: room, as: inbound.ghost) }
            } catch is MatrixLinkError {
                throw MatrixLinkError.unavailable("membership of the DM room")
            } catch {
                membership = nil
            }
            if membership == .join || membership == .invite { return room }
            logger.info("The Matrix user is no longer in the DM room; opening a new one",
                        metadata: ["matrix.dm.id": room.rawValue, "matrix.user.id": inbound.user.rawValue])
            try? await context.matrix.leave(room, as: inbound.ghost, reason: nil)
            chat.matrixRoom = nil
        }
        let pending = chat
        try await context.durably { try await store.saveDirectChat(pending) }
        try await retrying { try await self.context.matrix.registerGhost(inbound.ghost) }
        // Not retried on an ambiguous failure: a repeat could create a second room.
        let room = try await context.matrix.createDirectRoom(as: inbound.ghost, inviting: inbound.user)
        chat.matrixRoom = room
        let created = chat
        try await context.durably { try await store.saveDirectChat(created) }
        logger.info("DM room created", metadata: ["matrix.room.id": linkedRoom.rawValue, "matrix.dm.id": room.rawValue,
                                                   "matrix.user.id": inbound.user.rawValue])
        return room
    }

    private func leave(_ room: RoomID, as ghost: UserID, reason: String?) async {
        do {
            try await retrying { try await self.context.matrix.registerGhost(ghost) }
            try await retrying { try await self.context.matrix.leave(room, as: ghost, reason: reason) }
            logger.info("A ghost left a room it does not bridge", metadata: ["matrix.room.id": room.rawValue, "matrix.user.id": ghost.rawValue])
        } catch {
            logger.warning("A ghost could not leave a room", metadata: ["matrix.room.id": room.rawValue, "error": "\(error)"])
        }
    }

    // MARK: Helpers

    /// An `m.notice` from `ghost` in `room`, its txnId derived from `subject` (a repeat posts nothing new).
    func notice(_ text: String, in room: RoomID, as ghost: UserID, subject: String) async throws {
        _ = try await retrying {
            try await self.context.matrix.send(OutgoingMatrixMessage(kind: .notice, body: text), as: ghost, in: room,
                                               txnID: self.context.naming.noticeTxnID(subject: subject), timestamp: nil)
        }
    }

    /// Runs `call`, again after each of the first five pauses of ``Backoff`` (1, 2, 4, 8 and 16 s) while the
    /// homeserver is unavailable (a private message from XMPP is in memory only: the MUC does not archive it). Blocks
    /// the DMs meanwhile, which all need the homeserver too.
    func retrying<T: Sendable>(_ call: () async throws -> T) async throws -> T {
        for attempt in 0..<5 {
            do {
                return try await call()
            } catch is MatrixLinkError {
                try await Task.sleep(for: Backoff().pause(after: attempt))
            }
        }
        return try await call()
    }
}
