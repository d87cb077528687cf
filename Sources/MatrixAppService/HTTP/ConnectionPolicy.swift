/// Which connections ``HTTPServer`` keeps when it is under pressure, and which it closes. Pure value: no sockets,
/// no clock (time is passed in); the server performs the actions it returns, on whichever thread delivered the event.
///
/// A connection is *authenticated* once one of its requests was admitted as authenticated (it presented the
/// token); until then it is *unauthenticated*. A connection is *idle* between requests (including before its first).
/// The rules, so that connections nobody vouched for can never crowd out the one that carries the token:
/// - **Total limit**: when a new connection takes the count above ``Limits/total``, the oldest idle unauthenticated
///   connection is closed; if there is none, the authenticated connection idle the longest; if every other
///   connection is in a request, the newcomer itself. Among candidates, those with bytes waiting unread go last:
///   in a burst, libmicrohttpd accepts several connections before it reads their heads, and a connection whose
///   head is already on its way is more likely the homeserver than one that sent nothing.
/// - **Per address**: idle unauthenticated connections from one address are capped at ``Limits/unauthenticatedPerAddress``;
///   a newcomer above the cap closes the oldest of them. Authenticated connections never count, so a homeserver
///   sharing an address with attackers (loopback, NAT) is not locked out.
/// - **Deadline**: an idle unauthenticated connection is closed ``Limits/unauthenticatedTimeout`` after it opened or
///   after its last request ended, even if it keeps trickling bytes (``expire(now:)``).
/// Connections in a request are never closed by these rules.
struct ConnectionPolicy: Sendable {
    /// Identifies one connection for as long as it is open (the server uses libmicrohttpd's connection address).
    struct ID: Hashable, Sendable, CustomStringConvertible {
        /// The connection's address in libmicrohttpd (unique while it is open).
        let rawValue: UInt
        /// `#<rawValue>`.
        var description: String { "#\(rawValue)" }
    }

    /// The limits the rules apply.
    struct Limits: Sendable, Equatable {
        /// Open connections kept at most.
        var total: Int
        /// Idle unauthenticated connections kept at most per peer address.
        var unauthenticatedPerAddress: Int
        /// How long an unauthenticated connection may stay idle (or take to send its request head).
        var unauthenticatedTimeout: Duration
    }

    /// Why a connection is closed (also the reason in the server's rate-limited log).
    enum CloseReason: String, Sendable, Equatable {
        case connectionLimit = "connection_limit"
        case addressLimit = "address_limit"
        case unauthenticatedTimeout = "unauthenticated_timeout"
    }

    /// What the owner must do.
    enum Action: Sendable, Equatable {
        /// Close this connection (it is no longer counted from now on).
        case close(ID, address: String, CloseReason)
        /// The connection just authenticated: give it the longer idle timeout of authenticated connections.
        case extendTimeout(ID)
    }

    private struct Entry {
        var address: String
        /// Arrival order, to break ties between equal instants.
        var sequence: UInt64
        var authenticated = false
        var inRequest = false
        /// Whether a close was asked for (the connection still exists until ``closed(_:)``).
        var closing = false
        /// When the connection opened or its last request ended.
        var idleSince: ContinuousClock.Instant
    }

    /// The limits in force.
    let limits: Limits
    private var entries: [ID: Entry] = [:]
    private var nextSequence: UInt64 = 0

    init(limits: Limits) { self.limits = limits }

    /// Connections open and not being closed.
    var openCount: Int { entries.values.count(where: { !$0.closing }) }

    /// Whether `id` is known and was not asked to close.
    func isOpen(_ id: ID) -> Bool { entries[id].map { !$0.closing } ?? false }

    /// A connection was accepted from `address`. `hasUnreadInput` tells whether a connection has bytes waiting that
    /// libmicrohttpd has not read yet (the owner peeks at the socket).
    mutating func opened(_ id: ID, address: String, now: ContinuousClock.Instant,
                         hasUnreadInput: (ID) -> Bool = { _ in false }) -> [Action] {
        entries[id] = Entry(address: address, sequence: nextSequence, idleSince: now)
        nextSequence += 1
        var actions: [Action] = []
        let sameAddress = idleUnauthenticated { $0.address == address }
        if sameAddress.count > limits.unauthenticatedPerAddress,
           let oldest = leastValuable(sameAddress, excluding: id, hasUnreadInput: hasUnreadInput) {
            actions.append(close(oldest, .addressLimit))
        }
        if openCount > limits.total {
            let idleAuthenticated = entries.filter { !$0.value.closing && $0.value.authenticated && !$0.value.inRequest }.map(\.key)
            let victim = leastValuable(idleUnauthenticated { _ in true }, excluding: id, hasUnreadInput: hasUnreadInput)
                ?? leastValuable(idleAuthenticated, excluding: id, hasUnreadInput: hasUnreadInput)
                ?? id
            actions.append(close(victim, .connectionLimit))
        }
        return actions
    }

    /// A request head arrived on `id` and was admitted (`authenticated` when it presented valid credentials) or refused.
    mutating func requestStarted(_ id: ID, authenticated: Bool) -> [Action] {
        guard var entry = entries[id] else { return [] }
        entry.inRequest = true
        let newlyAuthenticated = authenticated && !entry.authenticated
        entry.authenticated = entry.authenticated || authenticated
        entries[id] = entry
        return newlyAuthenticated ? [.extendTimeout(id)] : []
    }

    /// The request on `id` ended (answered or aborted); the connection is idle again.
    mutating func requestFinished(_ id: ID, now: ContinuousClock.Instant) {
        entries[id]?.inRequest = false
        entries[id]?.idleSince = now
    }

    /// The connection is gone.
    mutating func closed(_ id: ID) { entries[id] = nil }

    /// Closes idle unauthenticated connections past their deadline.
    mutating func expire(now: ContinuousClock.Instant) -> [Action] {
        let expired = idleUnauthenticated { now - $0.idleSince >= limits.unauthenticatedTimeout }
        return expired.sorted { entries[$0]!.sequence < entries[$1]!.sequence }.map { close($0, .unauthenticatedTimeout) }
    }

    private func idleUnauthenticated(where predicate: (Entry) -> Bool) -> [ID] {
        entries.filter { !$0.value.closing && !$0.value.authenticated && !$0.value.inRequest && predicate($0.value) }.map(\.key)
    }

    /// The candidate to close first: silent before sending, then idle the longest, then the earliest.
    private func leastValuable(_ candidates: [ID], excluding excluded: ID, hasUnreadInput: (ID) -> Bool) -> ID? {
        candidates.filter { $0 != excluded }
            .map { (id: $0, sending: hasUnreadInput($0) ? 1 : 0, entry: entries[$0]!) }
            .min { ($0.sending, $0.entry.idleSince, $0.entry.sequence) < ($1.sending, $1.entry.idleSince, $1.entry.sequence) }?
            .id
    }

    private mutating func close(_ id: ID, _ reason: CloseReason) -> Action {
        entries[id]?.closing = true
        return .close(id, address: entries[id]?.address ?? "", reason)
    }
}
