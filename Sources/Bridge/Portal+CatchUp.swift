import Foundation
import IsthmusCommon
import IsthmusStore

extension Portal {
    /// XEP-0313 catch-up: bridges what the MUC archived after the last stanza-id we handled, in order, once;
    /// and takes reflections of our own messages found there as their receipts.
    ///
    /// The first activation of a link bridges nothing from before it (unless messages of ours await a receipt).
    func catchUp(firstActivation: Bool) async throws {
        let room = link.matrixRoom
        let last = try await context.store.lastStanzaID(room)
        let undelivered = try await context.store.undeliveredMappings(room)
        if firstActivation && undelivered.isEmpty { return }
        var since: Date?
        if last == nil {
            // Nothing bridged from the MUC yet: start where the link first became active (a small margin covers
            // clock differences with the XMPP server; the message map drops what was already bridged), or shortly
            // before the oldest message of ours that awaits its receipt.
            let firstActive = try await context.store.activeSince(room)?.addingTimeInterval(-2)
            let oldestPending = undelivered.first?.createdAt.addingTimeInterval(-120)
            since = [firstActive, oldestPending].compactMap { $0 }.min()
            guard since != nil else { return }
        }
        let archived = try await context.xmpp.archive(room: link.muc, as: context.naming.botOccupant, after: last, since: since)
        logger.info("Archive catch-up", metadata: ["xmpp.mam.count": "\(archived.count)", "xmpp.mam.after": last?.rawValue ?? "-"])
        for message in archived {
            var copy = message
            copy.fromArchive = true
            await bridgeRoomMessage(copy)
        }
    }

    /// Resends Matrix messages that never got their reflection (the archive did not show them either), oldest first.
    /// Returns false when the XMPP side was unavailable (the rest wait, and so must newer messages: order).
    func resendUndelivered() async -> Bool {
        let pending: [MessageMapping]
        do {
            pending = try await context.store.undeliveredMappings(link.matrixRoom)
        } catch {
            logger.error("Could not read undelivered messages", metadata: ["error": "\(error)"])
            return true
        }
        for mapping in pending {
            guard let user = UserID(mapping.sender), let originID = mapping.originID, let body = mapping.body else { continue }
            logger.info("Resending an unreceipted message", metadata: ["xmpp.origin.id": originID.rawValue])
            do {
                try await sendAsPuppet(user, body: body, originID: originID)
            } catch let error as XMPPLinkError where error == .notConnected || error == .timeout {
                logger.warning("Resend failed; the XMPP side is unavailable", metadata: ["xmpp.origin.id": originID.rawValue, "error": "\(error)"])
                return false
            } catch {
                logger.warning("Resend failed", metadata: ["xmpp.origin.id": originID.rawValue, "error": "\(error)"])
            }
        }
        return true
    }
}
