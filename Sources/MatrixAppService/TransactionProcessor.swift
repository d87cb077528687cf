import FoundationEssentials
import IsthmusCommon
import Matrix

/// Exactly-once handling of pushed transactions (appservice API §2.3.2 "Pushing events"). Used by
/// ``AppServiceListener`` from a single task, so transactions are processed one at a time in arrival order.
///
/// A known id is answered 200 without the handler — unless it carries messages never seen (an id the homeserver reused
/// after a restart), which go to the handler like a new transaction; a new one goes to the handler, which records it as
/// processed in the same commit as its effects (see ``AppServiceHandler/handle(_:)``), then answered 200. A handler
/// failure answers 500 so the homeserver retries the same transaction.
struct TransactionProcessor: Sendable {
    let handler: any AppServiceHandler
    let logger: Logger

    /// Processes one transaction body and returns the answer. Asks and calls the handler.
    func process(_ id: TransactionID, body: Data) async -> HTTPServerResponse {
        var logger = self.logger
        logger[metadataKey: "matrix.txn.id"] = id.rawValue
        let processed: Bool
        do {
            processed = try await handler.isProcessed(id)
        } catch {
            logger.error("Could not read processed transactions", metadata: ["error": "\(error)"])
            return .matrixError(Self.failed)
        }
        let transaction: Transaction
        switch TransactionDecoder.decode(body, id: id) {
        case .failure(let rejection):
            if processed { return .json(200, EmptyObject()) }
            logger.warning("Transaction body refused", metadata: ["matrix.errcode": rejection.errcode.rawValue, "error": rejection.message])
            return .matrixError(rejection)
        case .success(let decoded):
            transaction = decoded
        }
        if processed {
            do {
                guard try await carriesUnseenMessages(transaction) else {
                    logger.debug("Transaction already processed; acknowledged again")
                    return .json(200, EmptyObject())
                }
            } catch {
                logger.error("Could not read processed transactions", metadata: ["error": "\(error)"])
                return .matrixError(Self.failed)
            }
            // Synapse (SQLite) can hand out a transaction id again after it restarts (found by scripts/chaos, seed
            // 2026): the messages in it are new. Processing them is safe either way — the inbox and the message map
            // drop what was queued or bridged already.
            logger.notice("A known transaction id came with messages never seen; processing them", metadata: [
                "matrix.txn.events": String(transaction.events.count)])
        }
        if !transaction.rejectedEvents.isEmpty {
            logger.warning("Transaction has events that could not be decoded; skipping them", metadata: [
                "matrix.txn.rejected": String(transaction.rejectedEvents.count),
                "error": transaction.rejectedEvents[0].reason,
            ])
        }
        do {
            try await handler.handle(transaction)
        } catch {
            logger.error("Transaction handler failed; the homeserver will retry", metadata: ["error": "\(error)"])
            return .matrixError(Self.failed)
        }
        logger.debug("Transaction processed", metadata: [
            "matrix.txn.events": String(transaction.events.count), "matrix.txn.ephemeral": String(transaction.ephemeral.count),
            "matrix.txn.to_device": String(transaction.toDevice.count),
        ])
        return .json(200, EmptyObject())
    }

    /// Whether `transaction` has a message event the handler has never kept: then its id, although recorded as
    /// processed, was reused for new events. A true repeat's messages were all kept when it was first processed.
    private func carriesUnseenMessages(_ transaction: Transaction) async throws -> Bool {
        let messages = transaction.events.filter { $0.type == MatrixEventType.message }
        for (room, events) in Dictionary(grouping: messages, by: \.roomID) {
            let ids = events.map(\.eventID)
            if try await handler.seenMessages(ids, in: room).count < Set(ids).count { return true }
        }
        return false
    }

    private static let failed = AppServiceRejection(status: 500, errcode: MatrixErrorCode.unknown, message: "Transaction not processed; retry later")
}

/// `{}`.
struct EmptyObject: Codable, Sendable {}
