import FoundationEssentials
import IsthmusCommon

extension MatrixLink {
    /// Makes an XMPP message's Matrix calls as `ghost` in `room`, in order, and returns the event id of each — the
    /// same for a linked room's delivery and a DM's. Each call is idempotent (its txnId comes from the stanza), so a
    /// retry after a partial failure repeats nothing. `importing` turns a shared file into the media message to send
    /// (or its fallback).
    func perform(_ sends: [PortalStateMachine.MatrixSend], as ghost: UserID, in room: RoomID, timestamp: Date?,
                 isolation: isolated (any Actor)? = #isolation,
                 importing: (XMPPFileLink, OutgoingMatrixMessage) async throws -> OutgoingMatrixMessage) async throws -> [EventID?] {
        var eventIDs: [EventID?] = []
        for send in sends {
            switch send {
            case .message(let outgoing, let txnID):
                eventIDs.append(try await self.send(outgoing, as: ghost, in: room, txnID: txnID, timestamp: timestamp))
            case .reaction(let target, let key, let txnID):
                eventIDs.append(try await react(to: target, key: key, as: ghost, in: room, txnID: txnID, timestamp: timestamp))
            case .redaction(let event, let reason, let txnID):
                eventIDs.append(try await redact(event, reason: reason, as: ghost, in: room, txnID: txnID))
            case .media(let link, let fallback, let txnID):
                let outgoing = try await importing(link, fallback)
                eventIDs.append(try await self.send(outgoing, as: ghost, in: room, txnID: txnID, timestamp: timestamp))
            }
        }
        return eventIDs
    }
}
