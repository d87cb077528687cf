/// At most one value per key per `interval`, the latest winning: a value offered while its key's window is open waits
/// (replacing any value already waiting) and goes out when the window closes, unless it is what went out last. Pure
/// value; time is passed in. Used for typing notices, chat states and read markers (see ``EphemeralMachine``).
struct LatestWinsThrottle<Key: Hashable & Sendable & CustomStringConvertible, Value: Equatable & Sendable>: Sendable {
    /// The shortest time between two values of one key.
    let interval: Duration
    /// A value equal to the last one sent goes out again once this long has passed (a typing notice that would time
    /// out on the homeserver); nil: never again.
    let repeatAfter: Duration?

    private struct Sent: Sendable {
        var value: Value
        var at: ContinuousClock.Instant
    }

    private var sent: [Key: Sent] = [:]
    private var waiting: [Key: Value] = [:]

    init(interval: Duration, repeatAfter: Duration? = nil) {
        self.interval = interval
        self.repeatAfter = repeatAfter
    }

    /// Offers `value` for `key`: returns it when it goes out now; nil when it waits for the window to close or is what
    /// went out last.
    mutating func offer(_ value: Value, for key: Key, now: ContinuousClock.Instant) -> Value? {
        waiting[key] = nil
        if let last = sent[key] {
            let same = last.value == value
            if now < last.at + interval {
                if !same { waiting[key] = value }
                return nil
            }
            if same, repeatAfter.map({ now < last.at + $0 }) ?? true { return nil }
        }
        sent[key] = Sent(value: value, at: now)
        return value
    }

    /// Notes that `value` went out for `key` by other means (it counts as sent now; a waiting value is dropped).
    mutating func record(_ value: Value, for key: Key, now: ContinuousClock.Instant) {
        waiting[key] = nil
        sent[key] = Sent(value: value, at: now)
    }

    /// The values whose window has closed, now going out (by key, in a stable order).
    mutating func takeDue(now: ContinuousClock.Instant) -> [(key: Key, value: Value)] {
        var due: [(key: Key, value: Value)] = []
        for (key, value) in waiting {
            guard let last = sent[key], now < last.at + interval else {
                due.append((key, value))
                continue
            }
        }
        due.sort { $0.key.description < $1.key.description }
        for (key, value) in due {
            waiting[key] = nil
            sent[key] = Sent(value: value, at: now)
        }
        return due
    }

    /// The last value that went out for `key`, if any.
    func lastSent(_ key: Key) -> Value? { sent[key]?.value }

    /// When the earliest waiting value is due; nil when none waits.
    var nextDeadline: ContinuousClock.Instant? {
        waiting.keys.compactMap { key in sent[key].map { $0.at + interval } }.min()
    }
}
