import IsthmusCommon

/// Decides when a homeserver transaction may sit behind one the homeserver never pushed. Pure value; time passed in.
///
/// Synapse can strand a transaction (see `Portal+MatrixCatchUp`): when its retry of an appservice that was unreachable
/// or failed a transaction ends while a new event's transaction is being written, that transaction is stored unsent and
/// goes out only after the next outage. Synapse numbers transactions from one increasing sequence (shared by all its
/// appservices), so a stranded transaction shows as a hole in the ids the bridge receives. Only the messages behind
/// such a hole must wait for a timeline check: everything else goes straight through.
///
/// Stranding can only happen while the homeserver is retrying us, i.e. for a while after the bridge started or failed
/// a transaction (``arm(now:)``). Inside that window a hole — or an id that is not a number, from a homeserver that
/// numbers differently — asks for a check; outside it, holes are other appservices' transactions and cost nothing.
struct TransactionGapDetector: Sendable {
    /// How long after ``arm(now:)`` holes count.
    let window: Duration
    /// The highest numeric transaction id seen in this process.
    private(set) var highest: Int64?
    private var armedUntil: ContinuousClock.Instant?

    init(window: Duration) {
        self.window = window
    }

    /// The homeserver may now be retrying us: the bridge (re)started, or it answered a transaction with an error.
    mutating func arm(now: ContinuousClock.Instant) {
        armedUntil = now + window
    }

    /// A transaction arrived. Returns whether its events must wait until rooms checked their timelines for events
    /// that were never pushed. A replayed (lower) id never asks.
    mutating func observe(_ id: TransactionID?, now: ContinuousClock.Instant) -> Bool {
        let armed = armedUntil.map { now < $0 } ?? false
        guard let number = id.flatMap({ Int64($0.rawValue) }), number >= 0 else { return armed }
        defer { highest = max(highest ?? number, number) }
        guard armed, let highest else { return false }
        return number > highest + 1
    }
}
