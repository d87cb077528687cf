/// Decides which refusals deserve a log line: the first for each (source address, reason) in every interval
/// (a minute by default), carrying the number of refusals held back since the previous line for that pair.
/// Pure value: time is passed in; its owner keeps it behind a lock and writes the lines (the appservice listener's
/// `RefusalLog`; the DMs, for invitations they decline).
///
/// Memory stays bounded whatever the number of sources: at ``capacity`` pairs, pairs whose interval has passed
/// with nothing held back are forgotten, and new pairs beyond that are counted under the address `other`.
public struct RefusalLogLimiter: Sendable {
    /// What a refusal is counted under.
    public struct Key: Hashable, Sendable {
        /// The peer's IP address (or ``RefusalLogLimiter/overflowAddress``), or whatever the refusals come from.
        public var address: String
        /// The refusal's name, e.g. `wrong_token`.
        public var reason: String

        public init(address: String, reason: String) {
            self.address = address
            self.reason = reason
        }
    }

    private struct Window {
        var start: ContinuousClock.Instant
        var suppressed: Int
    }

    /// The address that pairs beyond ``capacity`` are counted under.
    public static let overflowAddress = "other"

    /// At most one line per key in this time.
    public let interval: Duration
    /// Keys tracked at most (see the type's documentation).
    public let capacity: Int
    private var windows: [Key: Window] = [:]

    public init(interval: Duration = .seconds(60), capacity: Int = 1024) {
        self.interval = interval
        self.capacity = capacity
    }

    /// Records one refusal at `now`. Returns nil to stay quiet, or — to log one line now — how many refusals of
    /// this pair were held back since its previous line, and the key to log under.
    public mutating func refused(_ key: Key, now: ContinuousClock.Instant) -> (key: Key, suppressed: Int)? {
        let key = admit(key, now: now)
        guard var window = windows[key] else {
            windows[key] = Window(start: now, suppressed: 0)
            return (key, 0)
        }
        guard now - window.start >= interval else {
            window.suppressed += 1
            windows[key] = window
            return nil
        }
        windows[key] = Window(start: now, suppressed: 0)
        return (key, window.suppressed)
    }

    /// `key`, or its overflow key when the table is full of pairs that still have something to report.
    private mutating func admit(_ key: Key, now: ContinuousClock.Instant) -> Key {
        guard windows[key] == nil, windows.count >= capacity else { return key }
        windows = windows.filter { $0.value.suppressed > 0 || now - $0.value.start < interval }
        guard windows.count >= capacity else { return key }
        return Key(address: Self.overflowAddress, reason: key.reason)
    }
}
