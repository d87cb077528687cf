/// Names one inbound stanza of one connection, so its consumer can say when the stanza's effect is durable
/// (``ClientConnection/handled(_:)``), in whatever order its effects complete.
public struct InboundTicket: Sendable, Hashable {
    /// The connection (``ClientConnection``'s link number) the stanza came on.
    let link: Int
    /// Its place among that connection's inbound stanzas, from 0.
    let position: Int
}

/// One connection's inbound stanzas that XEP-0198's `h` does not count yet, in arrival order, each marked once its
/// effect is durable. `h` may only count a handled prefix (XEP-0198 §4: "the number of stanzas handled"), while the
/// bridge finishes stanzas of different rooms out of order: a stanza handled early waits here until every one before
/// it is handled too. A value; the connection actor owns it.
struct InboundLedger: Sendable {
    /// The link whose stanzas these are.
    private(set) var link = 0
    /// How many of this link's stanzas left the ledger (counted in `h`): the position of ``handled``'s first entry.
    private var counted = 0
    /// The stanzas not yet counted, oldest first: true once handled.
    private var handled: [Bool] = []

    /// Starts over for a new connection: tickets of the old one are ignored from now on.
    mutating func reset(link: Int) {
        self.link = link
        counted = 0
        handled = []
    }

    /// Records the next inbound stanza; `handled`: already dealt with (an answer a request took, a ping answered).
    mutating func arrived(handled isHandled: Bool) -> InboundTicket {
        defer { handled.append(isHandled) }
        return InboundTicket(link: link, position: counted + handled.count)
    }

    /// Marks the stanza `ticket` names as handled (a ticket of an earlier link, or one marked before, changes nothing).
    mutating func markHandled(_ ticket: InboundTicket) {
        guard ticket.link == link else { return }
        let index = ticket.position - counted
        guard handled.indices.contains(index) else { return }
        handled[index] = true
    }

    /// Marks the oldest stanza not yet handled (for a consumer that handles in arrival order).
    mutating func markOldestHandled() {
        guard let index = handled.firstIndex(of: false) else { return }
        handled[index] = true
    }

    /// Removes the handled stanzas at the head and returns how many: what `h` may now count.
    mutating func takeHandledPrefix() -> Int {
        let prefix = handled.firstIndex(of: false) ?? handled.count
        guard prefix > 0 else { return 0 }
        handled.removeFirst(prefix)
        counted += prefix
        return prefix
    }
}
