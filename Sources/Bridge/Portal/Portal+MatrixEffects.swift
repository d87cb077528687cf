import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// The Matrix side of the portal's actions: client-server calls as the bot or a ghost. Runs on the portal's actor.
/// Mostly I/O; a few fallbacks are chosen here: a retried delivery first looks for its earlier copy in the timeline,
/// and an XMPP file that cannot be imported goes as its link (the ghosts' own calls: `Portal+GhostEffects`).
extension Portal {
    /// Sets or withdraws the room's bridge-info state as the bot. A refusal (the bot lacks the power to send state)
    /// is logged and the link carries on without it.
    func setBridgeInfo(_ info: BridgeInfoState) async {
        do {
            try await context.matrix.setBridgeInfo(info, in: link.matrixRoom)
        } catch {
            logger.warning("Could not set the room's m.bridge state", metadata: [
                "matrix.state.key": info.stateKey, "matrix.bridge_info.set": "\(info.content != nil)", "error": "\(error)"])
        }
    }

    /// Posts a notice as the bridge bot in the Matrix room (best effort, idempotent per subject).
    func postNotice(_ text: String, subject: String) async {
        do {
            _ = try await context.matrix.send(OutgoingMatrixMessage(kind: .notice, body: text), as: context.matrix.botUserID,
                                              in: link.matrixRoom, txnID: context.naming.noticeTxnID(subject: subject),
                                              timestamp: nil)
        } catch {
            logger.error("Could not post a notice", metadata: ["error": "\(error)"])
        }
    }

    /// A short description of an error for logs, notices and the machine.
    static func describe(_ error: any Error) -> String {
        MessageTranslation.describe(error)
    }

    /// The room's last events (one page, as the bot) searched for a copy of `delivery`; nil when there is none or
    /// the homeserver does not answer (the send that follows then fails or succeeds as usual).
    func earlierCopy(of delivery: PortalStateMachine.MatrixDelivery) async -> EventID? {
        guard let page = try? await context.matrix.timeline(link.matrixRoom, from: nil, limit: Self.earlierCopyLookback),
              let mapped = try? await context.store.seenMatrixEvents(link.matrixRoom, among: page.entries.map(\.eventID)) else {
            return nil
        }
        return PortalStateMachine.earlierCopy(of: delivery, in: page.entries.reversed(), mapped: mapped)
    }

    /// How many of the room's latest events a retry looks through for its earlier copy.
    static let earlierCopyLookback = 50
}

extension Portal {
    /// The message for an XMPP user's file: fetched and uploaded as `ghost` (see ``MediaImporter``), or `fallback`
    /// (the link as text) when it cannot be bridged as a file — the reason is logged. Throws
    /// ``MatrixLinkError/unavailable(_:)`` when the homeserver could not take the upload now (the delivery is retried).
    func importedFile(_ link: XMPPFileLink, fallback: OutgoingMatrixMessage, ghost: UserID, key: StanzaID) async throws -> OutgoingMatrixMessage {
        guard let importer = context.mediaImporter else { return fallback }
        let encrypted = try await context.matrix.encryptsFiles(in: self.link.matrixRoom, as: ghost)
        let (message, declined) = try await importer.message(sharing: link, fallback: fallback, as: ghost, encrypted: encrypted)
        if let declined { logger.info("An XMPP file is bridged as a link", metadata: ["xmpp.stanza.id": key.rawValue, "reason": declined]) }
        return message
    }
}
