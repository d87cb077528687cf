import IsthmusCommon
import Matrix

extension BridgeAppServiceHandler {
    /// A transaction's typing and receipts in the bridge's terms, per room in order: `m.typing` lists without
    /// bridge-owned users (`isOurs`: the bot and ghosts, so our own notices never echo), and each user's newest
    /// public read receipt. `m.read.private` is never bridged (spec §11.6.2: private receipts are for the user's own
    /// devices), nor are receipts inside a thread (a marker only moves forward through the whole room). Pure.
    static func ephemeral(_ events: [EphemeralEvent], isOurs: (UserID) -> Bool) -> [(RoomID, MatrixEphemeral)] {
        var result: [(RoomID, MatrixEphemeral)] = []
        for event in events {
            switch event {
            case .typing(let room, let users):
                result.append((room, .typing(Set(users.filter { !isOurs($0) }))))
            case .receipts(let room, let receipts):
                var reads: [UserID: EventID] = [:]
                // Sorted by timestamp when decoded: the last one per user is the newest.
                for receipt in receipts where receipt.receiptType == Self.publicReadReceipt && !isOurs(receipt.userID)
                    && (receipt.threadID == nil || receipt.threadID == Self.mainThread) {
                    reads[receipt.userID] = receipt.eventID
                }
                if !reads.isEmpty { result.append((room, .read(reads))) }
            case .unknown:
                continue
            }
        }
        return result
    }

    /// The receipt type bridged (`m.read.private` is not).
    static let publicReadReceipt = "m.read"
    /// The `thread_id` of a receipt on the main timeline (spec §11.6.2.2).
    static let mainThread = "main"
}
