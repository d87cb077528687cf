import Foundation
import IsthmusCommon
import IsthmusStore

extension Portal {
    /// Reads this room's inbox from the store and handles it in order, checking the Matrix timeline for messages the
    /// homeserver never pushed first when asked (see `Portal+MatrixCatchUp`): recovered messages take their place in
    /// the timeline's order, the rest keep arrival order after them.
    func drainStore(checkTimeline: Bool) async -> PortalStateMachine.DrainOutcome {
        let order = checkTimeline ? await recoverUnpushedMatrixMessages() : [:]
        var entries: [InboxEntry]
        do {
            entries = try await context.store.inbox(link.matrixRoom)
            if !order.isEmpty {
                entries.sort { (order[$0.eventID] ?? Int.max, $0.seq) < (order[$1.eventID] ?? Int.max, $1.seq) }
            }
        } catch {
            logger.error("Could not read the Matrix inbox", metadata: ["error": "\(error)"])
            return .blocked(retry: true)
        }
        let decoder = JSONDecoder()
        var queued: [QueuedMatrixEvent] = []
        queued.reserveCapacity(entries.count)
        for entry in entries {
            guard let event = try? decoder.decode(MatrixRoomEvent.self, from: Data(entry.payload)) else {
                logger.error("Dropping an undecodable inbox entry", metadata: ["matrix.event.id": entry.eventID.rawValue])
                try? await context.store.deleteInbox(seq: entry.seq)
                continue
            }
            queued.append(QueuedMatrixEvent(seq: entry.seq, event: event))
        }
        let outcome = await drain(queued)
        if case .complete = outcome { return .complete(highestSeq: entries.map(\.seq).max() ?? 0) }
        return outcome
    }

    /// Handles queued Matrix events in the given order, removing each from the inbox once handled. Stops (keeping
    /// the rest) when the XMPP side is unavailable: retried after a pause when it was only slow, else on reconnect.
    func drain(_ queued: [QueuedMatrixEvent]) async -> PortalStateMachine.DrainOutcome {
        for entry in queued {
            do {
                if try await handleMatrixEvent(entry.event, inboxSeq: entry.seq) { continue }
            } catch let error as XMPPLinkError where error == .notConnected || error == .timeout {
                logger.info("XMPP is unavailable; Matrix events wait in the inbox", metadata: ["error": "\(error)"])
                return .blocked(retry: error == .timeout)
            } catch {
                logger.error("Could not bridge a Matrix event", metadata: ["matrix.event.id": entry.event.eventID.rawValue, "error": "\(error)"])
            }
            do {
                try await context.store.deleteInbox(seq: entry.seq)
            } catch {
                logger.error("Could not dequeue a Matrix event", metadata: ["error": "\(error)"])
                return .blocked(retry: true)
            }
        }
        return .complete(highestSeq: queued.map(\.seq).max() ?? 0)
    }

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
