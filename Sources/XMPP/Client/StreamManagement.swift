/// XEP-0198's bookkeeping for one client session, as a value: what we sent that the server has not acknowledged, what
/// we handled of the server's, and what a resumption needs. No I/O and no clock; the c2s connection feeds it and
/// performs what it returns. The whole value is what the store keeps (issue 27: written in the same transaction as
/// the effects of the stanzas it counts), so a restarted bridge resumes the session instead of rejoining.
///
/// Counting (XEP-0198 §4): both counters start at 0 at `<enabled/>` and wrap from 2³²−1 to 0. `h` in the server's
/// `<a/>` and `<resumed/>` is how many of our stanzas it has handled in all; an `h` beyond what we sent is a protocol
/// error (`handled-count-too-high`). Inbound stanzas count only once their effect is durable (``handled()``), so an
/// ack never claims a stanza a crash could still lose.
public struct StreamManagement<Outbound: Sendable & Hashable>: Sendable, Hashable {
    /// The server's name for the session (`<enabled id>`), nil when it did not offer resumption.
    public private(set) var sessionID: String?
    /// Where to reconnect to resume (`<enabled location>`), when the server said.
    public private(set) var location: String?
    /// How many of the server's stanzas we handled (the `h` we send).
    public private(set) var inboundHandled: UInt32 = 0
    /// The server's last `h`: how many of ours it has handled.
    public private(set) var outboundAcknowledged: UInt32 = 0
    /// What we sent since that `h`, oldest first: resent on resumption.
    public private(set) var unacknowledged: [Outbound] = []
    /// The unacknowledged count when we last sent `<r/>`.
    private var countAtLastRequest = 0
    /// Restored from the store and not yet confirmed by the server: the store may lag behind the last stanzas we sent
    /// before a crash, so the first `h` may count more than it lists (those went; nothing is known to resend).
    private var restored = false

    /// A session the server just enabled (`resumable`: it gave an id and `resume='true'`).
    public init(enabled sessionID: String?, resumable: Bool, location: String?) {
        self.sessionID = resumable ? sessionID : nil
        self.location = resumable ? location : nil
    }

    /// A session as the store kept it (after a restart: what ``resumeRequest`` and the resend need).
    public init(sessionID: String?, location: String?, inboundHandled: UInt32, outboundAcknowledged: UInt32,
                unacknowledged: [Outbound]) {
        self.sessionID = sessionID
        self.location = location
        self.inboundHandled = inboundHandled
        self.outboundAcknowledged = outboundAcknowledged
        self.unacknowledged = unacknowledged
        restored = true
    }

    /// Whether this session can be resumed after the connection drops.
    public var isResumable: Bool { sessionID != nil }

    /// How many of our stanzas we have sent in all (mod 2³²).
    public var outboundSent: UInt32 { outboundAcknowledged &+ UInt32(truncatingIfNeeded: unacknowledged.count) }

    /// A stanza of ours went out: it waits for an ack.
    public mutating func sent(_ stanza: Outbound) {
        unacknowledged.append(stanza)
    }

    /// A stanza from the server has been handled and its effect is durable: it counts in the next `h` we send.
    public mutating func handled() {
        inboundHandled &+= 1
    }

    /// Whether to ask for an ack now: `every` stanzas went out since the last request.
    public func shouldRequestAck(every: Int) -> Bool {
        unacknowledged.count - countAtLastRequest >= every
    }

    /// We sent `<r/>`.
    public mutating func ackRequested() {
        countAtLastRequest = unacknowledged.count
    }

    /// The server's `<a h/>`: returns the stanzas it now confirms, oldest first.
    public mutating func acknowledged(h: UInt32) throws(StreamManagementError) -> [Outbound] {
        var newly = Int(h &- outboundAcknowledged)
        if newly > unacknowledged.count, restored, newly <= Self.restoredLagLimit {
            newly = unacknowledged.count   // the server handled every one we kept and some the store had not caught up with
        } else if newly > unacknowledged.count {
            throw .handledCountTooHigh(h: h, sent: outboundSent)
        }
        restored = false
        let confirmed = Array(unacknowledged.prefix(newly))
        unacknowledged.removeFirst(newly)
        countAtLastRequest = max(0, countAtLastRequest - newly)
        outboundAcknowledged = h
        return confirmed
    }

    /// How far a restored session's first `h` may run ahead of what the store kept (a crash between sends and the
    /// store's catching up): beyond that it is the server's error, not our lag.
    static var restoredLagLimit: Int { 10_000 }

    /// The server's `<resumed h/>`: what it confirms, and what to send again, in order (what it never handled). The
    /// resent stanzas stay unacknowledged; the server counts them afresh from `h`.
    public mutating func resumed(h: UInt32) throws(StreamManagementError) -> (confirmed: [Outbound], resend: [Outbound]) {
        let confirmed = try acknowledged(h: h)
        countAtLastRequest = 0
        return (confirmed, unacknowledged)
    }

    /// The server refused to resume (`<failed h?>`, usually `item-not-found`: the session timed out). Returns what it
    /// confirms (when it sent `h`) and what it may or may not have handled — the caller checks the room's archive for
    /// those before sending anything again. The session is over; a new one starts at the next `<enabled/>`.
    public func resumeFailed(h: UInt32?) -> (confirmed: [Outbound], unknown: [Outbound]) {
        var copy = self
        guard let h, let confirmed = try? copy.acknowledged(h: h) else { return ([], unacknowledged) }
        return (confirmed, copy.unacknowledged)
    }

    /// The `<resume/>` to send for this session, nil when it cannot be resumed.
    public var resumeRequest: StreamManagementNonza? {
        sessionID.map { .resume(previd: $0, h: inboundHandled) }
    }

    /// The `<a/>` answering the server's `<r/>`.
    public var ack: StreamManagementNonza { .ack(h: inboundHandled) }
}

/// Why the server's stream-management counts cannot be right.
public enum StreamManagementError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server acknowledged more stanzas than we sent (XEP-0198 §4: a stream error, `handled-count-too-high`).
    case handledCountTooHigh(h: UInt32, sent: UInt32)

    public var description: String {
        switch self {
        case .handledCountTooHigh(let h, let sent):
            "the server acknowledged \(h) stanzas but only \(sent) were sent (handled-count-too-high)"
        }
    }
}
