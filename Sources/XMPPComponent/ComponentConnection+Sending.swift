import IsthmusCommon
import XMLStream

/// Sending stanzas and waiting for answers. On the ``ComponentConnection`` actor.
extension ComponentConnection {
    /// Writes `stanza` after everything sent before it. Does not wait for the server.
    ///
    /// - Throws: ``ComponentError/notConnected`` when the link is not up (nothing is queued for later);
    ///   ``ComponentError/fromOutsideComponentDomain(_:)`` when `from` is missing or not in the component domain —
    ///   checked here because the server would kill the whole link with `<invalid-from/>`.
    public func send(_ stanza: Stanza) throws(ComponentError) {
        guard let link, !link.finished else { throw .notConnected }
        try link.machine.validateOutgoing(stanza)
        do {
            try link.socket.write(XMLSerializer.bytes(of: stanza.element))
        } catch {
            throw .notConnected
        }
    }

    /// Sends a `get` or `set` IQ and waits for its `result` or `error` (matched by id and by the responder being the
    /// IQ's `to`). An `error` response is returned, not thrown.
    ///
    /// - Throws: what ``send(_:)`` throws; ``ComponentError/timeout(_:)`` after `timeout` (default
    ///   ``ComponentConfiguration/requestTimeout``); the connection's error if it drops first; `CancellationError`.
    public func sendIQ(_ iq: IQ, timeout: Duration? = nil) async throws -> IQ {
        precondition(iq.isRequest, "sendIQ sends requests (get or set); send responses with send(_:)")
        let deadline = configuration.timeSource.now() + (timeout ?? configuration.requestTimeout)
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
        let deadline = configuration.timeSource.now() + (timeout ?? configuration.requestTimeout)
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
}
