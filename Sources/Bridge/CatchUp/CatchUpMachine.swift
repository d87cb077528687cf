import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// Catch-up both ways, and the order of a drain: what the MUC announces (stanza-ids, an archive), the XEP-0313 query
/// that fills the gap since the last stanza-id at activation, and the drain's Matrix timeline check (messages the
/// homeserver never pushed, and the room's order; see `Portal+CatchUpEffects`). A sub-machine of
/// ``PortalStateMachine``: it owns this state, its actions reach the ``Portal`` wrapped in
/// ``PortalStateMachine/Action/catchUp(_:)``, and its requests (``Request``) hand the router the work that follows
/// (archived messages to bridge, inbox events in the order to handle them).
struct CatchUpMachine: Sendable {
    /// What the room announced when last asked (each activation, and when its configuration changes); nil until known (stanza-ids are then trusted, as before).
    private(set) var features: RoomFeatures?
    /// The next drain from the store checks the Matrix timeline first.
    private(set) var timelineCheckPending = false
    /// What the current drain's timeline check learnt (empty: no check, arrival order).
    private(set) var timeline = TimelineOrder()

    enum Input: Sendable, Equatable {
        /// The room's features are wanted (an activation, or the MUC's configuration changed).
        case readFeatures
        /// What the room announces; nil when disco#info could not be read.
        case featuresRead(RoomFeatures?)
        /// The room's persisted state arrived at activation: the archive may fill the gap since then.
        case roomLoaded(PortalStateMachine.RoomSnapshot)
        /// The archive's messages after the resume point, oldest first; nil when the query failed.
        case archiveFetched([RoomMessage]?)
        /// Something may be missing or out of order (a hole in the transaction ids, an activation, a self-check):
        /// the next drain from the store checks the timeline first.
        case timelineCheckDue
        /// A drain from the store starts.
        case drainFromStore
        /// The room's recent timeline, for the drain's timeline check (empty: it could not be read, or the link was never
        /// active: arrival order stands); nil when shutdown cut the check short (the drain then waits: arrival order
        /// may not be the room's).
        case timelineRead(TimelineRead?)
        /// How queueing the messages the timeline check found ended.
        case strandedQueued(StoreOutcome)
        /// The inbox in the store's order (nil when it could not be read), with the rows that no longer decode.
        case inboxRead([QueuedMatrixEvent]?, undecodable: [UndecodableInboxRow] = [])
    }

    /// What the portal must do, in order; "→" marks the actions whose outcome (an ``Input``) the machine waits for.
    indirect enum Action: Sendable, Equatable {
        /// → ``Input/featuresRead(_:)``: the room's disco#info (stanza-ids, archive, name).
        case readRoomFeatures
        /// Whether the room keeps an archive with stanza-ids, for `isthmus links`.
        case recordRoomFeatures(RoomFeatures)
        /// → ``Input/archiveFetched(_:)``: the MUC archive after `after` (or since `since`).
        case fetchArchive(after: StanzaID?, since: Date?)
        /// → ``Input/timelineRead(_:)``: the Matrix room's recent timeline as the bot, with which of its events the
        /// bridge has seen.
        case readTimeline
        /// → ``Input/strandedQueued(_:)``: messages the homeserver never pushed, found in the timeline, are queued in
        /// the inbox.
        case enqueueStranded([MatrixRoomEvent])
        /// → ``Input/inboxRead(_:undecodable:)``: the room's Matrix inbox from the store.
        case readInbox
        case log(PortalStateMachine.LogEntry)

        /// Whether the machine waits for this action's outcome.
        var awaitsOutcome: Bool {
            switch self {
            case .readRoomFeatures, .fetchArchive, .readTimeline, .enqueueStranded, .readInbox: true
            case .recordRoomFeatures, .log: false
            }
        }
    }

    /// What the machine returns, in order: actions for the ``Portal``, and work only the router can do.
    typealias Output = SubMachineOutput<Action, Request>

    enum Request: Sendable, Equatable {
        /// The room's features are known (the room-state machine reads its name from them).
        case featuresKnown(RoomFeatures)
        /// Archived messages, oldest first, to bridge before anything else (each marked as from the archive).
        case bridgeArchived([RoomMessage])
        /// The drain handles these inbox events in this order, after the undecodable rows are dropped.
        case drain([QueuedMatrixEvent], dropping: [UndecodableInboxRow])
        /// The drain cannot go on now (a check or a read cut short): the inbox waits and is tried again.
        case drainBlocked
    }

    /// What the machine may read of the room (kept by the portal machine), handed in with each input.
    struct Room {
        /// Whether the portal would act on this Matrix event (a message, reaction or redaction of a bridged user).
        var isBridgeable: (MatrixRoomEvent) -> Bool
    }

    /// Takes one input; returns what to do, in order (an awaited action ends the batch).
    mutating func receive(_ input: Input, in room: Room) -> [Output] {
        switch input {
        case .readFeatures:
            return [.perform(.readRoomFeatures)]
        case .featuresRead(let read):
            return featuresRead(read)
        case .roomLoaded(let snapshot):
            if features?.canCatchUp == false { return [] }   // nothing to catch up from (said at activation)
            guard let query = Self.catchUpQuery(snapshot) else { return [] }
            return [.perform(.fetchArchive(after: query.after, since: query.since))]
        case .archiveFetched(let messages):
            guard let messages else { return [] }
            let archived = messages.map { message in
                var archived = message
                archived.fromArchive = true
                return archived
            }
            return [.perform(.log(.init(level: .info, message: "Archive catch-up", metadata: ["xmpp.mam.count": "\(messages.count)"]))),
                    .portal(.bridgeArchived(archived))]
        case .timelineCheckDue:
            timelineCheckPending = true
            return []
        case .drainFromStore:
            timeline = TimelineOrder()
            let check = timelineCheckPending
            timelineCheckPending = false
            return [.perform(check ? .readTimeline : .readInbox)]
        case .timelineRead(let read):
            guard let read else {
                // A check was due (a hole, or the first drain after an activation) and did not happen: in arrival
                // order a message from a held transaction would be overtaken, and once mapped, resent late by the
                // next run. The drain waits and checks again.
                timelineCheckPending = true
                return [.portal(.drainBlocked)]
            }
            return timelineRead(read, in: room)
        case .strandedQueued(let outcome):
            return strandedQueued(outcome)
        case .inboxRead(let stored, let undecodable):
            guard let stored else { return [.portal(.drainBlocked)] }
            return [.portal(.drain(Self.drainOrder(stored, timeline: timeline), dropping: undecodable))]
        }
    }

    /// The room's disco#info arrived: stanza-ids are trusted only where the room announces them, and a room without
    /// an archive is said to be one — once per process, and again only after it had one (reactivations after every
    /// reconnect or rejoin repeat nothing). When disco#info fails the last answer stands.
    private mutating func featuresRead(_ read: RoomFeatures?) -> [Output] {
        guard let read else {
            return [.perform(.log(.init(level: .warning, message: "Could not read the MUC's features; keeping what was known", metadata: [:])))]
        }
        let saidBefore = features?.canCatchUp == false
        features = read
        var outputs: [Output] = [.perform(.recordRoomFeatures(read)), .portal(.featuresKnown(read))]
        if !read.canCatchUp && !saidBefore {
            outputs.append(.perform(.log(.init(
                level: .notice, message: "The MUC keeps no archive with stanza-ids: messages sent while the bridge is down cannot be caught up",
                metadata: ["xmpp.muc.stanza_ids": "\(read.stanzaIDs)", "xmpp.muc.archive": "\(read.archive)"]))))
        }
        return outputs
    }

    /// The timeline check's answer: the drain follows the timeline's order — also when nothing was missing: a
    /// transaction the homeserver delivered late put its events behind later ones in the inbox — and what the
    /// homeserver never pushed is queued first (its late copy is then a duplicate the inbox and the message map drop).
    private mutating func timelineRead(_ read: TimelineRead, in room: Room) -> [Output] {
        // A homeserver repeating an event across pages must not crash us: its first place counts.
        timeline = TimelineOrder(
            positions: Dictionary(read.entries.enumerated().map { ($1.eventID, $0) }, uniquingKeysWith: { first, _ in first }),
            queuedThrough: read.queuedThrough)
        let missed = Self.strandedMessages(in: read.entries, seen: read.seen, now: read.now, isBridgeable: room.isBridgeable)
        return [.perform(missed.isEmpty ? .readInbox : .enqueueStranded(missed))]
    }

    /// The stranded messages were queued (they are in the inbox the drain reads next) — or not: then the next drain
    /// checks again; cut short by shutdown, this one waits, as for a check cut short.
    private mutating func strandedQueued(_ outcome: StoreOutcome) -> [Output] {
        switch outcome {
        case .done: return [.perform(.readInbox)]
        case .failed:
            timelineCheckPending = true
            return [.perform(.readInbox)]
        case .cancelled:
            timelineCheckPending = true
            return [.portal(.drainBlocked)]
        }
    }

    /// XEP-0313 catch-up: what to ask the archive for — after the last stanza-id we handled; when there is none, since
    /// the link first became active (a small margin covers clock differences with the XMPP server; the message map
    /// drops what was already bridged) or shortly before the oldest message of ours that awaits its receipt. The
    /// first activation of a link bridges nothing from before it (unless messages of ours await a receipt). Pure.
    static func catchUpQuery(_ snapshot: PortalStateMachine.RoomSnapshot) -> (after: StanzaID?, since: Date?)? {
        if snapshot.firstActivation && snapshot.undelivered.isEmpty { return nil }
        if let last = snapshot.lastStanzaID { return (last, nil) }
        let firstActive = snapshot.activeSince?.addingTimeInterval(-2)
        let oldestPending = snapshot.undelivered.first?.createdAt.addingTimeInterval(-120)
        guard let since = [firstActive, oldestPending].compactMap({ $0 }).min() else { return nil }
        return (nil, since)
    }
}
