import IsthmusCommon
import IsthmusStore

/// The room avatar action (``RoomStateMachine/Action/setMatrixRoomAvatar(_:)``), through ``AvatarFetcher`` and the
/// Matrix link. On the portal's actor. Mostly I/O; before clearing, it reads the room's avatar itself and clears it
/// only while it is still the bridge's.
extension Portal {
    /// Fetches the MUC's avatar from the room's vCard (as the bridge's occupant; checked and uploaded once per hash,
    /// as the bot) and sets it as the Matrix room's avatar, or clears the bridge's avatar there while the room still
    /// shows it; then records what the bridge set. Returns how it ended (the portal queues it for the machine).
    func setMatrixRoomAvatar(_ change: RoomStateMachine.RoomAvatarChange) async -> RoomStateMachine.RoomAvatarOutcome {
        let room = link.matrixRoom
        var record: RoomAvatarRecord?
        do {
            if let sha1 = change.sha1 {
                guard let fetcher = context.avatars,
                      let mxc = await fetcher.xmppAvatar(sha1: sha1, sources: [link.muc.bare], asker: context.naming.botOccupant,
                                                         xmpp: context.xmpp, ghost: context.matrix.botUserID)
                else { return .notFetched }
                try await context.matrix.setRoomPicture(mxc, in: room)
                record = RoomAvatarRecord(sha1: sha1, mxc: mxc)
            } else if let ours = change.ours, try await context.matrix.roomPicture(room) == ours {
                try await context.matrix.setRoomPicture(nil, in: room)
            }
        } catch {
            return .failed(Self.matrixFailure(error))
        }
        do {
            try await context.durably { try await context.store.setRoomAvatar(room, record) }
        } catch {
            // Set but not recorded: the next activation sets it again (the upload is kept by hash).
            logger.error("Could not record the room's avatar", metadata: ["error": "\(error)"])
        }
        return .applied(record)
    }
}
