import Foundation
import IsthmusCommon
import IsthmusStore

extension Portal {
    /// Handles this room's queued Matrix events in order, deleting each once handled. Stops (keeping the rest)
    /// while the XMPP side is down; `.activate` resumes after the link is back. First checks the timeline for
    /// messages the homeserver never pushed when one is due (see `Portal+MatrixCatchUp`), or `checkTimeline`.
    func drainInbox(checkTimeline: Bool = false) async {
        guard xmppConnected, botJoined, !inboxBlocked else { return }
        let order = checkTimeline || timelineCheckDue ? await recoverUnpushedMatrixMessages() : [:]
        var entries: [InboxEntry]
        do {
            entries = try await context.store.inbox(link.matrixRoom)
            if !order.isEmpty {
                // Recovered messages take their place in the timeline; the rest keep arrival order after them.
                entries.sort { (order[$0.eventID] ?? Int.max, $0.seq) < (order[$1.eventID] ?? Int.max, $1.seq) }
            }
        } catch {
            logger.error("Could not read the Matrix inbox", metadata: ["error": "\(error)"])
            return
        }
        let decoder = JSONDecoder()
        for entry in entries {
            guard let event = try? decoder.decode(MatrixRoomEvent.self, from: Data(entry.payload)) else {
                logger.error("Dropping an undecodable inbox entry", metadata: ["matrix.event.id": entry.eventID.rawValue])
                try? await context.store.deleteInbox(seq: entry.seq)
                continue
            }
            do {
                if try await handleMatrixEvent(event, inboxSeq: entry.seq) { continue }
            } catch let error as XMPPLinkError where error == .notConnected || error == .timeout {
                // Retried on the next activation (reconnect), after a pause when the server was only slow, or at
                // the self-check; nothing is lost or reordered.
                logger.info("XMPP is unavailable; Matrix events wait in the inbox", metadata: ["error": "\(error)"])
                blockInbox(retry: error == .timeout)
                return
            } catch {
                logger.error("Could not bridge a Matrix event", metadata: ["matrix.event.id": event.eventID.rawValue, "error": "\(error)"])
            }
            do {
                try await context.store.deleteInbox(seq: entry.seq)
            } catch {
                logger.error("Could not dequeue a Matrix event", metadata: ["error": "\(error)"])
                return
            }
        }
    }

    /// Stops draining until the XMPP side is back (the next activation), or — `retry`, when it was only slow — until
    /// ``PortalEvent/retryInbox`` after a pause (queued, so the portal's order is kept).
    func blockInbox(retry: Bool) {
        inboxBlocked = true
        guard retry else { return }
        let delay = Self.inboxRetryDelay
        Task { [self] in
            try? await Task.sleep(for: delay)
            enqueue(.retryInbox)
        }
    }

    /// The pause before the inbox is tried again after an XMPP request timed out.
    static let inboxRetryDelay: Duration = .seconds(5)

    /// One Matrix event: a message is sent by the sender's puppet; membership changes move puppets. Returns whether
    /// the inbox entry `inboxSeq` was consumed already (a message's mapping replaces it in the same commit).
    func handleMatrixEvent(_ event: MatrixRoomEvent, inboxSeq: Int64?) async throws -> Bool {
        switch event.content {
        case .message(let msgtype, let body):
            guard isBridgedMatrixUser(event.sender) else { return false }
            return try await bridgeMatrixMessage(event, msgtype: msgtype, body: body, inboxSeq: inboxSeq)
        case .member(let membership, let displayname, let reason):
            guard let subject = event.stateKey.flatMap(UserID.init), isBridgedMatrixUser(subject) else { return false }
            try await handleMembership(subject, event: event, membership: membership, displayname: displayname, reason: reason)
            return false
        }
    }

    private func bridgeMatrixMessage(_ event: MatrixRoomEvent, msgtype: String, body: String, inboxSeq: Int64?) async throws -> Bool {
        let room = link.matrixRoom
        guard let text = MessageTranslation.toXMPP(msgtype: msgtype, body: body) else { return false }
        let originID = context.naming.originID(for: event.eventID)
        // Not inserted: the event is mapped already (bridged, or being resent from the map), so nothing to do.
        guard try await context.store.insertMapping(MessageMapping(
            room: room, eventID: event.eventID, stanzaID: nil, originID: originID, direction: .matrixToXMPP,
            sender: event.sender.rawValue, state: .sending, body: text), consumingInbox: inboxSeq) else { return inboxSeq != nil }
        do {
            try await sendAsPuppet(event.sender, body: text, originID: originID)
        } catch let error as XMPPLinkError where error == .notConnected || error == .timeout {
            throw error
        } catch {
            try? await context.store.markFailed(room: room, originID: originID)
            let name = displaynames[event.sender] ?? event.sender.localpart
            await postNotice("⚠️ \(name)'s message could not be delivered to the XMPP room (\(MessageTranslation.describe(error))).",
                             subject: "failed:\(originID.rawValue)")
        }
        return inboxSeq != nil
    }

    private func handleMembership(_ user: UserID, event: MatrixRoomEvent, membership: String, displayname: String?,
                                  reason: String?) async throws {
        switch membership {
        case "join":
            if let displayname, !displayname.isEmpty { displaynames[user] = displayname } else { displaynames[user] = nil }
            do {
                try await ensurePuppet(user)
            } catch let error as XMPPLinkError where error == .notConnected || error == .timeout {
                throw error
            } catch {
                logger.warning("Puppet could not join", metadata: ["matrix.user.id": user.rawValue, "error": "\(error)"])
                await postNotice("⚠️ \(displaynames[user] ?? user.localpart) could not join the XMPP room (\(MessageTranslation.describe(error))).",
                                 subject: "join-failed:\(event.eventID.rawValue)")
            }
        case "leave", "ban":
            guard let puppet = puppets[user] else { return }
            var status: String?
            if event.sender != user {
                let who = displaynames[event.sender] ?? event.sender.localpart
                status = "\(membership == "ban" ? "Banned" : "Kicked") on Matrix by \(who)" + (reason.map { ": \($0)" } ?? "")
            }
            await removePuppet(puppet, status: status)
            displaynames[user] = nil
        default:
            return
        }
    }
}
