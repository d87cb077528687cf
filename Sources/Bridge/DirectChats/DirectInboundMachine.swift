import IsthmusCommon
import IsthmusStore

/// XMPP → Matrix in DMs (RICH.md §12) for one private message, in the portal's shape: the ``DirectChats`` actor reads
/// the pair's stored ``DirectChat``, starts this machine with it, performs the actions in order and feeds back the
/// outcome of the one that awaits it (always the last of a batch). Pure: no I/O; the fallback transaction key (for a
/// message with no id) is passed in.
///
/// Which DM room: a body-less message (reactions, a retraction) refers to a message of the DM there is and opens no
/// room; otherwise the stored room if the Matrix user is still in it (joined or invited), else a new one, recorded
/// before and after it is created. Then the message's targets in that room are read, the sends planned by
/// ``DirectChatRules/plan(_:in:targets:txnID:)``, made as the ghost, and the message mapped. A failed step (the
/// executor throws) ends the message: it is logged, not retried here.
struct DirectInboundMachine: Sendable {
    enum Input: Sendable, Equatable {
        /// The pair's DM as stored (nil: none yet).
        case start(DirectChat?)
        /// The Matrix user's membership of the stored DM room (nil: the ghost could not read it, so it is gone too).
        case membershipRead(Membership?)
        /// ``Action/createRoom(_:)`` made this room.
        case roomCreated(RoomID)
        /// What the message refers to in the DM room.
        case targetsRead(PortalStateMachine.XMPPTargets)
        /// The sends went out: their event ids (nil: a reaction that was there already).
        case sent([EventID?])
        /// The homeserver refused the ghost's send: it is not in the DM room.
        case notInRoom(reason: String)
    }

    enum Action: Sendable, Equatable {
        /// → ``Input/membershipRead(_:)``: the Matrix user's membership of `room`, asked as the ghost.
        case readMembership(RoomID)
        /// The ghost leaves the DM room the user left (best effort).
        case leave(RoomID)
        /// Save the pair's row (durably).
        case save(DirectChat)
        /// → ``Input/roomCreated(_:)``: the ghost is registered and creates the DM room, inviting the Matrix user.
        case createRoom(DirectChat)
        /// → ``Input/targetsRead(_:)``: the mapped messages the message refers to in `room`.
        case readTargets(RoomID)
        /// → ``Input/sent(_:)``: the calls, as the ghost, in `room`.
        case send([PortalStateMachine.MatrixSend], in: RoomID)
        /// The ghost joins `room` (invited first where needed).
        case join(RoomID)
        /// Map the message (and the reaction change), durably.
        case record(MessageMapping, reactions: ReactionChange)
        case log(PortalStateMachine.LogEntry)

        /// Whether the machine waits for this action's outcome.
        var awaitsOutcome: Bool {
            switch self {
            case .readMembership, .createRoom, .readTargets, .send: true
            case .leave, .save, .join, .record, .log: false
            }
        }
    }

    let inbound: DirectChatRules.Inbound
    let linkedRoom: RoomID
    let muc: JID
    let naming: BridgeNaming
    /// The transaction ids' key: the stanza's id, else the random key passed in.
    let key: String
    private var chat: DirectChat?
    private var room: RoomID?
    private var planned: (sends: [PortalStateMachine.MatrixSend], record: MessageMapping, reactions: ReactionChange)?
    /// The ghost was found not in the room once and joined again (a second refusal ends the message).
    private var rejoined = false

    init(_ inbound: DirectChatRules.Inbound, linkedRoom: RoomID, muc: JID, naming: BridgeNaming, fallbackKey: String) {
        self.inbound = inbound
        self.linkedRoom = linkedRoom
        self.muc = muc
        self.naming = naming
        key = inbound.stanzaID ?? fallbackKey
    }

    /// Takes one input; returns what to do, in order (at most the last action awaits an outcome).
    mutating func receive(_ input: Input) -> [Action] {
        switch input {
        case .start(let stored):
            chat = stored
            if inbound.message.body == nil {
                // With no DM it refers to nothing, and opens no room: an empty one would only invite the user to nothing.
                guard let existing = stored?.matrixRoom else {
                    return [log(.debug, "A body-less private message with no DM to refer to ignored")]
                }
                return use(existing)
            }
            // The leave may not have reached the bridge yet (it comes with a homeserver transaction, this from XMPP):
            // a message into a room the user left would be lost, so ask.
            if let existing = stored?.matrixRoom { return [.readMembership(existing)] }
            return open()
        case .membershipRead(let membership):
            guard let existing = chat?.matrixRoom else { return [] }
            if membership == .join || membership == .invite { return use(existing) }
            chat?.matrixRoom = nil
            return [log(.info, "The Matrix user is no longer in the DM room; opening a new one", ["matrix.dm.id": existing.rawValue]),
                    .leave(existing)] + open()
        case .roomCreated(let created):
            chat?.matrixRoom = created
            guard let chat else { return [] }
            return [.save(chat), log(.info, "DM room created", ["matrix.dm.id": created.rawValue])] + use(created)
        case .targetsRead(let targets):
            guard let room else { return [] }
            let (inbound, naming, muc, key) = (inbound, naming, muc, key)
            let plan = DirectChatRules.plan(inbound, in: room, targets: targets) { part in
                naming.privateTxnID(muc: muc, identity: inbound.identity, stanzaID: part.map { key + "\u{0}" + $0 } ?? key)
            }
            switch plan {
            case .ignore(let reason):
                // Debug: anyone in the room can send these, as often as they like.
                return [log(.debug, "Private message not bridged", ["reason": reason])]
            case .send(let sends, let record, let reactions):
                planned = (sends, record, reactions)
                return [.send(sends, in: room)]
            }
        case .notInRoom(let reason):
            // The ghost left the DM, or was made to leave (its user is still in it: the membership check said so, or
            // the message refers to what is there): it joins again and sends once more.
            guard let planned, let room, !rejoined else {
                return [log(.error, "Could not bridge a private message to Matrix", ["error": reason])]
            }
            rejoined = true
            return [log(.notice, "A ghost was not in the DM room; joining it and sending again", ["matrix.dm.id": room.rawValue]),
                    .join(room), .send(planned.sends, in: room)]
        case .sent(let eventIDs):
            guard let planned, let room else { return [] }
            // Mapped so later corrections, retractions and reactions in the DM find it; a repeat maps nothing new.
            let (bridged, change) = PortalStateMachine.recorded(planned.record, planned.reactions, sends: planned.sends, eventIDs: eventIDs)
            return [.record(bridged, reactions: change),
                    log(.debug, "Private message bridged to a DM", ["matrix.dm.id": room.rawValue, "kind": bridged.kind.rawValue])]
        }
    }

    /// The message goes to `room`: first what it refers to there.
    private mutating func use(_ room: RoomID) -> [Action] {
        self.room = room
        return [.readTargets(room)]
    }

    /// A new DM room: the pair is recorded before it is created, so a failure in between is retried on the same row.
    private mutating func open() -> [Action] {
        let pending = chat ?? DirectChat(linkedRoom: linkedRoom, identity: inbound.identity, matrixUser: inbound.user, muc: muc,
                                         ghost: inbound.ghost)
        chat = pending
        return [.save(pending), .createRoom(pending)]
    }

    private func log(_ level: Logger.Level, _ message: String, _ metadata: Logger.Metadata = [:]) -> Action {
        .log(PortalStateMachine.LogEntry(level: level, message: message, metadata: metadata))
    }
}
