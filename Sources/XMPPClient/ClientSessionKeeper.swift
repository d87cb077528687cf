import IsthmusCommon
import XMPP

/// Where the client connection keeps its XEP-0198 session across restarts (the bridge's store), so a restarted
/// bridge resumes it instead of starting a new one — its room occupancy and what the server queued for it intact.
public protocol ClientSessionKeeper: Sendable {
    /// Keeps `resumption` (nil: there is none to resume); returns once it is durable.
    func keep(_ resumption: ClientStateMachine.Resumption?) async throws
    /// The session kept, if any: read when the connection starts running (in an active/standby pair that is when the
    /// process becomes active — what the store holds then, not at its start, is the session to resume).
    func load() async throws -> ClientStateMachine.Resumption?
}

/// Keeping the session: every change is written (coalesced: while one write is under way, later changes wait and go
/// as one), and an ack to the server's `<r/>` goes out only once a write holding at least its `h` is durable — so
/// after a crash the session resumes from a count no ack of ours ever exceeded (a lower one is an error to the server,
/// RFC-wise `h` never goes back). On the ``ClientConnection`` actor.
extension ClientConnection {
    /// Takes the session the keeper holds as the one to resume, unless one was given at init.
    func loadKeptSession() async {
        guard resumption == nil, let keeper else { return }
        do {
            guard let kept = try await keeper.load() else { return }
            resumption = kept
            logger.info("Resuming the XMPP session kept in the store", metadata: [
                "xmpp.jid": kept.jid.description, "xmpp.unacknowledged": String(kept.streamManagement.unacknowledged.count)])
        } catch {
            logger.warning("Could not read the XMPP session kept in the store; starting a new one", metadata: ["error": "\(error)"])
        }
    }

    /// The session as it stands changed: the next connection resumes it, and the keeper writes it.
    func keepResumption(_ link: ClientLink) {
        guard !link.finished else { return }   // what the link's end decided (a close forgets the session) stands
        let current: ClientStateMachine.Resumption?
        if let streamManagement = link.machine.streamManagement, streamManagement.isResumable, let jid = link.machine.jid {
            current = ClientStateMachine.Resumption(streamManagement: streamManagement, jid: jid)
        } else if link.machine.isConnected {
            current = nil   // connected, but not in a session the server would resume
        } else {
            return   // negotiating: what we had still stands
        }
        setResumption(current)
    }

    /// Sets the session to resume and has it kept.
    func setResumption(_ current: ClientStateMachine.Resumption?) {
        guard current != resumption else { return }
        resumption = current
        keeping.changed += 1
        startKeepingIfNeeded()
    }

    /// The `<a h/>` to the server's `<r/>`: now if the keeper holds the current count (or there is no keeper), else
    /// once it does.
    func acknowledge(_ nonza: StreamManagementNonza, on link: ClientLink) {
        guard keeper != nil, keeping.written < keeping.changed else {
            writeNonza(nonza, on: link)
            return
        }
        keeping.ackWaiting = true
        startKeepingIfNeeded()
    }

    private func startKeepingIfNeeded() {
        guard let keeper, !keeping.running else { return }
        keeping.running = true
        Task { await keepLoop(keeper) }
    }

    /// Writes the latest session until the keeper is up to date, sending a waiting ack after each write.
    private func keepLoop(_ keeper: any ClientSessionKeeper) async {
        await keepWriting(keeping, failure: "Could not keep the XMPP session in the store; a restart will start a new one") {
            let value = resumption
            try await keeper.keep(value)
            if keeping.ackWaiting, let link, !link.finished, link.machine.isConnected, let handled = value?.streamManagement.inboundHandled {
                keeping.ackWaiting = false
                writeNonza(.ack(h: handled), on: link)
            }
        }
    }

    /// Runs `write` (a write of the latest value) until every change counted in `keeping` is written: one write at a
    /// time, a failed one logged as `failure` and tried again a second later. Then wakes those waiting.
    func keepWriting(_ keeping: KeepingState, failure: String, _ write: () async throws -> Void) async {
        while keeping.written < keeping.changed {
            let generation = keeping.changed
            do {
                try await write()
            } catch {
                logger.warning(failure, metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            keeping.written = generation
        }
        keeping.running = false
        for waiter in keeping.waiters { waiter.resume() }
        keeping.waiters = []
    }

    /// Returns once everything changed so far is kept, the session and the login's credentials (before the store closes).
    func waitUntilKept() async {
        for state in [keeping, keepingCredentials] where state.running {
            await withCheckedContinuation { state.waiters.append($0) }
        }
    }
}

/// A keeper's progress: changes made, changes written. Owned by the ``ClientConnection`` actor (a class so that one
/// write loop serves the session's and the credentials' keeping).
final class KeepingState {
    var changed = 0
    var written = 0
    var running = false
    /// The server asked for an ack while the keeper lagged.
    var ackWaiting = false
    var waiters: [CheckedContinuation<Void, Never>] = []
}
