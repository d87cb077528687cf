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
/// Both ways are decided by machines in the portal's shape: Matrix → XMPP by ``DirectChatMachine`` (one store read
/// per event, and one per DM room for the events handed over live), XMPP → Matrix by ``DirectInboundMachine`` (one
/// per private message); this actor performs their actions (and the homeserver retries, ``retrying(_:)``).
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
        case bounced(DirectChatMachine.Bounce)
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
        machine = DirectChatMachine(configuration: .init(naming: context.naming, mediaLinks: context.media?.signer,
                                                         ghostDevices: context.ghostDevices != nil))
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
            case .bounced(let bounce): await bounced(bounce)
            case .leave(let room, let ghost, let reason): await leave(room, as: ghost, reason: reason)
            }
        }
    }

    // MARK: XMPP → Matrix

    /// One private message through a ``DirectInboundMachine``: the stored pair read, then the machine's actions
    /// performed. A step that fails ends the message (logged): from XMPP it is in memory only.
    private func deliverToMatrix(_ inbound: DirectChatRules.Inbound, linkedRoom: RoomID, muc: JID) async {
        var logger = self.logger
        logger[metadataKey: "matrix.room.id"] = linkedRoom.rawValue
        logger[metadataKey: "matrix.user.id"] = inbound.user.rawValue
        logger[metadataKey: "xmpp.nick"] = inbound.nick
        var machine = DirectInboundMachine(inbound, linkedRoom: linkedRoom, muc: muc, naming: context.naming,
                                           fallbackKey: UUID().uuidString)
        do {
            var next: DirectInboundMachine.Input? = .start(
                try await context.store.directChat(linkedRoom: linkedRoom, ghost: inbound.ghost, user: inbound.user))
            while let input = next {
                next = nil
                let actions = machine.receive(input)
                assert(actions.dropLast().allSatisfy { !$0.awaitsOutcome }, "an awaited action must end its batch")
                for action in actions { next = try await perform(action, for: inbound, logger: logger) }
            }
        } catch {
            logger.error("Could not bridge a private message to Matrix", metadata: ["error": "\(MessageTranslation.describe(error))"])
        }
    }

    /// Performs one action of a ``DirectInboundMachine``; returns the outcome of one it awaits.
    private func perform(_ action: DirectInboundMachine.Action, for inbound: DirectChatRules.Inbound,
                         logger: Logger) async throws -> DirectInboundMachine.Input? {
        let (store, matrix, ghost) = (context.store, context.matrix, inbound.ghost)
        switch action {
        case .readMembership(let room):
            do {
                return .membershipRead(try await retrying { try await matrix.membership(of: inbound.user, in: room, as: ghost) })
            } catch MatrixLinkError.unavailable {
                throw MatrixLinkError.unavailable("membership of the DM room")
            } catch {
                return .membershipRead(nil)   // refused: the ghost is not in it either
            }
        case .leave(let room):
            try? await matrix.leave(room, as: ghost, reason: nil)
        case .save(let chat):
            try await context.durably { try await store.saveDirectChat(chat) }
        case .createRoom:
            try await retrying { try await matrix.registerGhost(ghost) }
            // Not retried on an ambiguous failure: a repeat could create a second room.
            return .roomCreated(try await matrix.createDirectRoom(as: ghost, inviting: inbound.user))
        case .readTargets(let room):
            return .targetsRead(try await store.xmppTargets(of: inbound.message, in: room))
        case .send(let sends, let room):
            do {
                return .sent(try await retrying {
                    try await matrix.perform(sends, as: ghost, in: room, timestamp: nil) {
                        try await self.importedFile($0, fallback: $1, ghost: ghost, in: room)
                    }
                })
            } catch MatrixLinkError.notInRoom(let reason) {
                return .notInRoom(reason: reason)
            }
        case .join(let room):
            try await retrying { try await matrix.join(room, as: ghost) }
        case .record(let mapping, let reactions):
            try await context.durably { try await store.recordBridgedFromXMPP(mapping, reactions: reactions) }
        case .log(let entry):
            logger.log(entry.level, entry.message, metadata: entry.metadata)
        }
        return nil
    }

    /// An XMPP user's file as a Matrix media message (fetched and uploaded as the ghost, see ``MediaImporter``), or
    /// `fallback` (the link as text) when media is not bridged or the file cannot be (the reason is logged). Throws
    /// while the homeserver cannot take the upload (the private message is then retried like a send).
    private func importedFile(_ link: XMPPFileLink, fallback: OutgoingMatrixMessage, ghost: UserID, in room: RoomID) async throws -> OutgoingMatrixMessage {
        guard let importer = context.mediaImporter else { return fallback }
        let encrypted = try await context.matrix.encryptsFiles(in: room, as: ghost)
        let (message, declined) = try await importer.message(sharing: link, fallback: fallback, as: ghost, encrypted: encrypted)
        if let declined { logger.info("An XMPP file in a private message is bridged as a link", metadata: ["reason": declined]) }
        return message
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

    /// An `m.notice` from `ghost` in `room`, its txnId derived from `subject` (a repeat posts nothing new). Throws
    /// ``MatrixLinkError/notInRoom(_:)`` when the ghost is not in the room: the caller decides what then.
    func notice(_ text: String, in room: RoomID, as ghost: UserID, subject: String) async throws {
        _ = try await retrying {
            try await self.context.matrix.send(OutgoingMatrixMessage(kind: .notice, body: text), as: ghost, in: room,
                                               txnID: self.context.naming.noticeTxnID(subject: subject), timestamp: nil)
        }
    }

    /// Runs `call`, again after each of the first five pauses of ``Backoff`` (1, 2, 4, 8 and 16 s, on the bridge's
    /// clock) while the homeserver is unavailable (a private message from XMPP is in memory only: the MUC does not
    /// archive it). Blocks the DMs meanwhile, which all need the homeserver too.
    func retrying<T: Sendable>(_ call: () async throws -> T) async throws -> T {
        for attempt in 0..<5 {
            do {
                return try await call()
            } catch MatrixLinkError.unavailable {
                try await context.clock.sleep(until: context.clock.now() + Backoff().pause(after: attempt))
            }
        }
        return try await call()
    }
}
