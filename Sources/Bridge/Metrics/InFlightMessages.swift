import IsthmusCommon
import Synchronization

/// Messages between entering the bridge and their delivery: when each entered and what kind it is, so the delivery
/// point (which sees only ids) can count the kind and observe the latency. Thread-safe.
///
/// Entries that never end (messages dropped as duplicates or echoes, failures) are bounded: past ``limit`` entries
/// the oldest ten minutes' worth are kept at most — latency samples may then be missing, counts never are.
final class InFlightMessages: Sendable {
    enum Key: Hashable, Sendable {
        /// A MUC message as routed to its portal, by the room's bare JID and its dedupe key (stanza-id or digest).
        case fromXMPP(muc: JID, key: StanzaID)
        /// Sent to Matrix, waiting for its map entry.
        case sentToMatrix(RoomID, EventID)
        /// A Matrix message waiting for its reflection in the MUC, by the origin-id it is sent with.
        case fromMatrix(RoomID, OriginID)
    }

    struct Entry: Sendable {
        var kind: BridgeMetrics.MessageKind
        /// When it entered; nil when it entered some other way than live (catch-up, a restart) and has no latency.
        var enteredAt: ContinuousClock.Instant?
        /// When the entry was made (for pruning).
        var recordedAt: ContinuousClock.Instant
    }

    static let limit = 10_000
    private let entries = Mutex<[Key: Entry]>([:])

    /// Records `key` unless it is already there (the first entry — the earliest time — wins).
    func enter(_ key: Key, kind: BridgeMetrics.MessageKind, at instant: ContinuousClock.Instant?, now: ContinuousClock.Instant) {
        entries.withLock { entries in
            guard entries[key] == nil else { return }
            if entries.count >= Self.limit {
                entries = entries.filter { now - $0.value.recordedAt < .seconds(600) }
                if entries.count >= Self.limit { entries.removeAll(keepingCapacity: true) }
            }
            entries[key] = Entry(kind: kind, enteredAt: instant, recordedAt: now)
        }
    }

    /// Removes and returns `key`'s entry.
    func take(_ key: Key) -> Entry? {
        entries.withLock { $0.removeValue(forKey: key) }
    }

    var count: Int { entries.withLock { $0.count } }
}
