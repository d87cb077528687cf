import IsthmusCommon
import IsthmusStore

extension DirectChats {
    /// DMs a Matrix user starts by inviting a ghost (RICH.md §12, "Matrix-initiated"), from a homeserver transaction's
    /// events in `rooms` (neither linked nor DM rooms). An invitation ``DirectChatRules/decide(isDirect:shared:encrypted:requireEncrypted:)``
    /// accepts is recorded as the pair's DM room before the transaction's events are queued, so the invite itself
    /// (the ghost joins when it is handled) and everything after it go through the durable inbox like any DM event; a
    /// DM room the pair had before is left. A direct invitation it cannot take is declined with the reason, best effort
    /// (a lost one stays an unanswered invite); one that is not a direct chat is left alone. Returns the rooms that became DM rooms.
    ///
    /// Runs on the caller's task (the appservice listener's), before the transaction is acknowledged: a failure here
    /// fails the transaction, which the homeserver then retries (recording the pair again changes nothing).
    nonisolated func openFromInvitations(_ events: [MatrixRoomEvent], in rooms: Set<RoomID>) async throws -> Set<RoomID> {
        var opened: Set<RoomID> = []
        for event in events where rooms.contains(event.room) && !opened.contains(event.room) {
            guard case .member(.invite, _, _) = event.content, let ghost = event.stateKey.flatMap(UserID.init),
                  context.matrix.isGhost(ghost), !context.matrix.isGhost(event.sender), event.sender != context.matrix.botUserID
            else { continue }
            let store = context.store
            let identity = try await store.ghostIdentity(ghost)
            let shared = identity == nil ? [] : try await store.sharedRooms(ghost: ghost, user: event.sender)
            let metadata: Logger.Metadata = ["matrix.dm.id": event.room.rawValue, "matrix.user.id": event.sender.rawValue,
                                             "matrix.ghost.id": ghost.rawValue]
            switch DirectChatRules.decide(isDirect: event.isDirect, shared: shared, encrypted: event.invitedToEncryptedRoom,
                                          requireEncrypted: context.encryptedRooms == .required) {
            case .ignore:
                continue
            case .refuse(let reason):
                if let line = declineLog.withLock({ $0.refused(Self.declineLogKey, now: .now) }) {
                    logger.info("A Matrix user's invitation of a ghost is declined", metadata: metadata.merging([
                        "reason": "\(reason)", "declined.unlogged": "\(line.suppressed)"]) { $1 })
                }
                enqueue(.leave(event.room, ghost: ghost, reason: reason))
            case .open(let place):
                guard let identity else { continue }
                let previous = try await store.directChat(linkedRoom: place.linkedRoom, ghost: ghost, user: event.sender)
                try await store.saveDirectChat(DirectChat(linkedRoom: place.linkedRoom, identity: identity, matrixUser: event.sender,
                                                          muc: place.muc, ghost: ghost, matrixRoom: event.room))
                if let old = previous?.matrixRoom, old != event.room {
                    enqueue(.leave(old, ghost: ghost, reason: "This conversation continues in a new direct chat."))
                }
                logger.info("A Matrix user opened a DM with a ghost",
                            metadata: metadata.merging(["matrix.room.id": "\(place.linkedRoom.rawValue)"]) { $1 })
                opened.insert(event.room)
            }
        }
        return opened
    }
}
