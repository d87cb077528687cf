import IsthmusCommon

/// XEP-0199 keepalive for one stream, shared by the component and client machines: after `interval` of silence, a
/// ping to `target`; if nothing at all arrives within `timeout` after it, the link is dead. Answers to our pings are
/// recognised (and swallowed by the machine) by id and sender.
struct Keepalive: Sendable {
    let target: JID?
    let interval: Duration
    let timeout: Duration
    private var lastReceived: ContinuousClock.Instant?
    private var outstanding: (id: StanzaAttributeID, sentAt: ContinuousClock.Instant)?
    /// Ids of our pings whose answers are still to be swallowed (the last few; older answers are delivered as is).
    private var unanswered: [StanzaAttributeID] = []
    private var count = 0

    init(target: JID?, interval: Duration, timeout: Duration) {
        self.target = target
        self.interval = interval
        self.timeout = timeout
    }

    /// What time passing means for the link.
    enum Verdict: Equatable {
        case quiet
        /// Send this ping.
        case ping(IQ)
        /// No bytes since the ping for `timeout`.
        case dead
    }

    /// Bytes arrived (even whitespace): the link is alive.
    mutating func received(now: ContinuousClock.Instant) {
        lastReceived = now
    }

    /// The stream was (re-)established: no ping is outstanding.
    mutating func restart() {
        outstanding = nil
    }

    mutating func tick(now: ContinuousClock.Instant, from: JID?) -> Verdict {
        let lastReceived = lastReceived ?? now
        if let ping = outstanding {
            if lastReceived >= ping.sentAt {
                outstanding = nil
            } else if now - ping.sentAt >= timeout {
                return .dead
            }
        }
        guard outstanding == nil, now - lastReceived >= interval else { return .quiet }
        count += 1
        let id = StanzaAttributeID("keepalive-\(count)")!
        outstanding = (id, now)
        unanswered.append(id)
        if unanswered.count > 8 { unanswered.removeFirst() }
        return .ping(IQ(type: .get, from: from, to: target, id: id, payload: .ping))
    }

    /// Whether `iq` answers one of our pings (`result` or `error` from the target, or with no sender when
    /// `implicitSender`: a client stream leaves the server's own address out). An answer is recognised once.
    mutating func isAnswer(_ iq: IQ, implicitSender: Bool) -> Bool {
        guard iq.type == .result || iq.type == .error, let index = unanswered.firstIndex(of: iq.id),
              iq.from == target || (implicitSender && iq.from == nil) else {
            return false
        }
        unanswered.remove(at: index)
        return true
    }
}
