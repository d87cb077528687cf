import IsthmusCommon
import XMLStream

/// An XMPP stream the bridge makes requests over — the XEP-0114 component's or the client account's — and the
/// request logic both share: IQs matched to their answers, MUC joins matched to the room's self-presence, archive
/// queries collecting their results. A conforming actor supplies ``send(_:)``, the waiters and the timers, and calls
/// ``routeAnswer(_:)`` with every stanza it receives; everything in the extensions runs on that actor.
package protocol StanzaSession: Actor {
    /// Writes `stanza` after everything sent before it (throws the link's own error when it cannot).
    func send(_ stanza: Stanza) throws
    /// The default wait for an answer.
    var requestTimeout: Duration { get }
    var sessionClock: TimeSource { get }
    var sessionLogger: Logger { get }
    /// Who asks when a request names no asker (the component's domain JID, the client's account).
    var defaultRequester: JID? { get }
    var iqWaiters: ResponseWaiters<StanzaAttributeID, JID?, IQ> { get }
    var presenceWaiters: ResponseWaiters<OccupantKey, OccupantPresenceMatcher, OccupantPresenceMatcher.Match> { get }
    var mamCollectors: [String: MAMCollector] { get set }
    /// Stops taking bytes from the server (the bridge cannot record what it would get) until ``resumeReading()``.
    func pauseReading()
    func resumeReading()
    /// Returns once the stream may take another message without outrunning the server: at once for the component; in
    /// client mode once fewer of our stanzas than the send window wait for the server's XEP-0198 acknowledgement (a
    /// server that throttles the account is followed, not buried; what waits is never dropped).
    func awaitSendCapacity() async
}

extension StanzaSession {
    /// Sends a `get` or `set` IQ and waits for its `result` or `error` (matched by id and by the responder being the
    /// IQ's `to`). An `error` response is returned, not thrown.
    ///
    /// - Throws: what ``send(_:)`` throws; ``XMPPRequestError/timeout(_:)`` after `timeout` (default
    ///   ``requestTimeout``); the connection's error if it drops first; `CancellationError`.
    package func sendIQ(_ iq: IQ, timeout: Duration? = nil) async throws -> IQ {
        precondition(iq.isRequest, "sendIQ sends requests (get or set); send responses with send(_:)")
        let deadline = sessionClock.now() + (timeout ?? requestTimeout)
        let id = iq.id
        let label = "iq \(id) to \(iq.to?.description ?? "the server")"
        let waiters = iqWaiters
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                do {
                    try waiters.register(id, context: iq.to, deadline: deadline, label: label, continuation: continuation)
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                do {
                    try send(.iq(iq))
                } catch {
                    waiters.fail(id, with: error)
                }
                if Task.isCancelled { waiters.fail(id, with: CancellationError()) }
            }
        } onCancel: {
            waiters.fail(id, with: CancellationError())
        }
    }

    /// Sends `presence` and waits for the room's answer to `matcher`'s occupant (self-presence or error).
    func sendAwaitingOccupantPresence(
        _ presence: Presence, matcher: OccupantPresenceMatcher, label: String, timeout: Duration?
    ) async throws -> OccupantPresenceMatcher.Match {
        let deadline = sessionClock.now() + (timeout ?? requestTimeout)
        let key = OccupantKey(occupant: matcher.occupant, room: matcher.room)
        let waiters = presenceWaiters
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                do {
                    try waiters.register(key, context: matcher, deadline: deadline, label: label, continuation: continuation)
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                do {
                    try send(.presence(presence))
                } catch {
                    waiters.fail(key, with: error)
                }
                if Task.isCancelled { waiters.fail(key, with: CancellationError()) }
            }
        } onCancel: {
            waiters.fail(key, with: CancellationError())
        }
    }

    /// Hands `stanza` to the request waiting for it (an IQ answer, a room's self-presence, an archive result);
    /// returns whether one took it (the stanza is then not the bridge's).
    package func routeAnswer(_ stanza: Stanza) -> Bool {
        switch stanza {
        case .iq(let iq) where iq.type == .result || iq.type == .error:
            return iqWaiters.resolve(iq.id, { expected in expected == nil || expected == iq.from ? iq : nil })
        case .presence(let presence):
            guard let to = presence.to, let from = presence.from else { return false }
            return presenceWaiters.resolve(OccupantKey(occupant: to, room: from.bare), { $0.match(presence) })
        case .message(let message):
            return collectArchived(message)
        default:
            return false
        }
    }

    /// Whether `element` is a presence to one of our occupants other than `primary` that cannot answer a request of
    /// that occupant in that room (``OccupantPresenceMatcher/mayAnswer(from:isError:isSelfPresence:)``): a room's copy
    /// the reader ignores. Read from its addresses, type and status codes, before the stanza is parsed. A presence to a
    /// room the component hosts (`#…`, gateway mode) or to the component itself is not one.
    package func isUnwatchedOccupantCopy(_ element: XElement, primary: JID) -> Bool {
        guard element.name == "presence", let toText = element[attribute: "to"], let to = JID(toText), to != primary,
              let localpart = to.localpart, !localpart.hasPrefix("#"),
              let fromText = element[attribute: "from"], let from = JID(fromText) else { return false }
        let isError = element[attribute: "type"] == "error"
        let isSelfPresence = element.child("x", namespace: XMPPNamespace.mucUser)?.children("status", namespace: XMPPNamespace.mucUser)
            .contains { $0[attribute: "code"] == "110" } ?? false
        return !presenceWaiters.contains(OccupantKey(occupant: to, room: from.bare)) {
            $0.mayAnswer(from: from, isError: isError, isSelfPresence: isSelfPresence)
        }
    }

    /// Fails every pending request with `error` (the connection ended) and forgets running archive queries.
    package func failPendingRequests(with error: any Error) {
        iqWaiters.failAll(with: error)
        presenceWaiters.failAll(with: error)
        mamCollectors.removeAll()
    }

    /// Fails the requests whose deadline has passed.
    package func expireRequests(now: ContinuousClock.Instant) {
        iqWaiters.expire(now: now)
        presenceWaiters.expire(now: now)
    }
}
