import IsthmusCommon

/// Decides when a homeserver transaction may sit behind one the homeserver never pushed. Pure value; time passed in.
///
/// Synapse can strand a transaction (see `Portal+CatchUpEffects`): when its retry of an appservice that was unreachable
/// or failed a transaction ends while a new event's transaction is being written, that transaction is stored unsent and
/// goes out only after the next outage. Synapse numbers transactions from one increasing sequence (shared by all its
/// appservices), so a stranded transaction shows as a hole in the ids the bridge receives. Only the messages behind
/// such a hole must wait for a timeline check: everything else goes straight through.
///
/// Stranding can only happen while the homeserver is retrying us, i.e. for a while after the bridge started or failed
/// a transaction (``arm(now:)``). Inside that window a hole — or an id that is not a number, from a homeserver that
/// numbers differently — asks for a check; outside it, holes are other appservices' transactions and cost nothing.
///
/// A hole stays open until its id arrives or the window ends (found by scripts/chaos, seed 11): Synapse's retry after
/// a restart can hold one transaction on a slow connection while it sends the next ones; an event of a room in a
/// later transaction must not overtake an event of that room in the held one. So while a hole is open, the rooms of
/// every transaction check their timelines before its events (the check takes a missed event that comes before one
/// the bridge has, and the drain follows the timeline's order).
struct TransactionGapDetector: Sendable {
    /// What a transaction's arrival means for the events in it.
    enum Gap: Sendable, Equatable {
        /// Nothing may be missing before them.
        case none
        /// A new hole (or an id that is not a number while armed): every room checks its timeline.
        case new
        /// An earlier hole is still open: the rooms of this transaction check their timelines.
        case open
    }

    /// How long after ``arm(now:)`` holes count.
    let window: Duration
    /// The highest numeric transaction id seen in this process.
    private(set) var highest: Int64?
    /// The ids of open holes (bounded: a hole wider than ``maxTracked`` is tracked by its first ids).
    private(set) var missing: Set<Int64> = []
    private var armedUntil: ContinuousClock.Instant?
    static let maxTracked: Int64 = 64

    init(window: Duration) {
        self.window = window
    }

    /// The homeserver may now be retrying us: the bridge (re)started, or it answered a transaction with an error.
    mutating func arm(now: ContinuousClock.Instant) {
        armedUntil = now + window
    }

    /// A transaction arrived. Says whether its events must wait until rooms checked their timelines for events that
    /// were never pushed (or are still on their way in a held transaction). A replayed (lower) id opens no hole.
    mutating func observe(_ id: TransactionID?, now: ContinuousClock.Instant) -> Gap {
        let armed = armedUntil.map { now < $0 } ?? false
        if !armed { missing.removeAll() }
        guard let number = id.flatMap({ Int64($0.rawValue) }), number >= 0 else { return armed ? .new : .none }
        let previous = highest
        highest = max(highest ?? number, number)
        missing.remove(number)
        guard armed, let previous else { return .none }
        if number > previous + 1 {
            missing.formUnion((previous + 1)..<min(number, previous + 1 + Self.maxTracked))
            return .new
        }
        return missing.isEmpty ? .none : .open
    }
}
