import IsthmusCommon
import Matrix

/// What one `/sync` batch of the bridge's Matrix account brings the bridge (Matrix client mode), apart from any I/O:
/// the room events to queue (the account's own and its ghosts' left out — echoes of what it sent), the raw events the
/// self-service desk reads (commands), the rooms whose timelines have a gap to fill, the rooms the account is invited
/// to, and those it was removed from. Pure.
struct MatrixSyncIntake: Sendable, Equatable {
    var events: [MatrixRoomEvent] = []
    var raw: [ClientEvent] = []
    /// Rooms whose timeline was `limited`: events between the last sync and these were left out.
    var gaps: [RoomID] = []
    var invites: [SyncResponse.InvitedRoom] = []
    var removals: [SyncResponse.LeftRoom] = []

    /// The batch's parts. `isOurs`: the account and its ghosts (names only here). `history`: false for the very first
    /// batch, whose timelines are the rooms' past (what happened before the bridge synced is not bridged, as an
    /// application service is never sent it); only invitations and removals count then.
    init(_ response: SyncResponse, isOurs: (UserID) -> Bool, history: Bool) {
        invites = response.invited
        removals = response.left
        guard history else { return }
        for room in response.joined {
            if room.limited { gaps.append(room.room) }
            for event in room.events where !isOurs(event.sender) {
                raw.append(event)
                if let translated = BridgeAppServiceHandler.roomEvent(event) { events.append(translated) }
            }
        }
    }

    init() {}
}
