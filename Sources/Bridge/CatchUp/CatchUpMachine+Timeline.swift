import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The Matrix timeline check of a drain: which messages the homeserver never pushed, and the order to handle the
/// inbox in (see `Portal+CatchUpEffects` for why a homeserver strands messages).
extension CatchUpMachine {
    /// A message this old that nothing later explains is taken as stranded rather than on its way.
    static let strandedAge: Duration = .seconds(30)

    /// Of a room's recent timeline (oldest first), the bridgeable messages the bridge never saw (`seen`: in the inbox
    /// or the message map) that are stranded rather than on their way: a later event already arrived, or they are
    /// older than ``strandedAge``. Pure.
    static func strandedMessages(in timeline: [MatrixTimelineEntry], seen: Set<EventID>, now: Date,
                                 isBridgeable: (MatrixRoomEvent) -> Bool) -> [MatrixRoomEvent] {
        let lastSeen = timeline.lastIndex { seen.contains($0.eventID) }
        var missed: [MatrixRoomEvent] = []
        for (index, entry) in timeline.enumerated() where !seen.contains(entry.eventID) {
            guard let event = entry.event, isBridgeable(event) else { continue }
            let age = entry.age ?? .seconds(max(0, now.timeIntervalSince(entry.timestamp)))
            if let lastSeen, index < lastSeen { missed.append(event) } else if age >= Self.strandedAge { missed.append(event) }
        }
        return missed
    }

    /// What the drain's timeline check read: the recent timeline (oldest first), which of its events the bridge has
    /// seen (queued or bridged), how far the inbox was queued before the timeline was read, and the wall clock then.
    struct TimelineRead: Sendable, Equatable {
        var entries: [MatrixTimelineEntry] = []
        var seen: Set<EventID> = []
        var queuedThrough: Int64 = 0
        var now = Date(timeIntervalSince1970: 0)
    }

    /// How a store write the machine waits for ended.
    enum StoreOutcome: Sendable, Equatable {
        case done
        /// Logged by the effect.
        case failed
        /// Cut short by shutdown.
        case cancelled
    }

    /// What a timeline check learnt for the drain after it (see ``drainOrder(_:timeline:)``).
    struct TimelineOrder: Sendable, Equatable {
        /// The room's recent timeline: event id → index, oldest first. Empty: no check (or the timeline could not
        /// be read), so arrival order stands.
        var positions: [EventID: Int] = [:]
        /// Inbox rows up to this number were queued before the timeline was read; a higher one arrived after.
        var queuedThrough: Int64 = 0
    }

    /// The order in which a drain handles the inbox: the store's (arrival) order, except that the entries the room's
    /// timeline names (read by a timeline check) take the timeline's order among the places they hold, and the entries
    /// that arrived after the timeline was read without being in it go last. Entries the timeline does not name that
    /// were queued before it was read (older than the check looked) keep their places.
    ///
    /// Arrival order is not the room's order when the homeserver delivers a transaction late: Synapse retries a held
    /// transaction after newer ones went through, and after a restart or a take-over the process that saw the hole
    /// is gone (seen in FailoverTests on ejabberd: a message in a transaction retried into the instance that took
    /// over was queued behind the later ones the stopped instance had queued, and went out after them). So every
    /// drain that checked the timeline follows it — not only when the check recovered something.
    ///
    /// An event pushed after the timeline was read and not in it is newer than everything the timeline names (the
    /// homeserver pushes an event only once it is stored, so one queued earlier is in the timeline). Keeping its place
    /// put it ahead of a message the check itself recovered, which is queued last (seen in FailoverTests on ejabberd:
    /// a message sent after the check went out before an earlier one, stranded, that the check had found). Pure.
    static func drainOrder(_ queued: [QueuedMatrixEvent], timeline: TimelineOrder) -> [QueuedMatrixEvent] {
        let positions = timeline.positions
        guard !positions.isEmpty else { return queued }
        let arrivedAfter = { (entry: QueuedMatrixEvent) in positions[entry.event.eventID] == nil && entry.seq > timeline.queuedThrough }
        var ordered = queued.filter { !arrivedAfter($0) }
        let places = ordered.indices.filter { positions[ordered[$0].event.eventID] != nil }
        let named = places.map { ordered[$0] }.enumerated().sorted { lhs, rhs in
            // Arrival order breaks ties (the store keeps one row per event; this keeps the sort deterministic anyway).
            (positions[lhs.element.event.eventID]!, lhs.offset) < (positions[rhs.element.event.eventID]!, rhs.offset)
        }
        for (place, entry) in zip(places, named) { ordered[place] = entry.element }
        return ordered + queued.filter(arrivedAfter)
    }

}
