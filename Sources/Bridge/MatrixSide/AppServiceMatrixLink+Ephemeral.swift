import FoundationEssentials
import IsthmusCommon
import Matrix
import MatrixClient

/// Typing notices and read receipts as a ghost: best-effort calls (nothing is stored or retried by the bridge).
extension AppServiceMatrixLink {
    public func setTyping(_ typing: Bool, as user: UserID, in room: RoomID, timeout: Duration) async throws {
        do {
            try await observed(.setTyping) { () async throws(MatrixError) in
                try await client.setTyping(typing, in: room, for: user, timeout: timeout)
            }
        } catch {
            throw Self.classify(error)
        }
    }

    public func sendReadReceipt(for event: EventID, as user: UserID, in room: RoomID) async throws {
        do {
            try await observed(.sendReceipt) { () async throws(MatrixError) in
                try await client.sendReadReceipt(for: event, in: room, as: user)
            }
        } catch {
            throw Self.classify(error)
        }
    }
}
