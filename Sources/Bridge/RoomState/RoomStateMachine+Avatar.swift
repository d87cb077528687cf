import IsthmusCommon
import IsthmusStore

/// The MUC's own avatar → the Matrix room's `m.room.avatar` (XEP-0486, RICH.md §8), for every link.
///
/// The room announces its avatar's SHA-1 in its disco#info (`muc#roominfo_avatarhash`, or mod_vcard_muc's field; read
/// at each activation and after a status 104) or in a presence from its bare JID (ejabberd 23.01, mod_vcard_muc). A hash
/// that differs from the one the bridge last applied (``RoomAvatarRecord``, kept per link) is fetched from the room's
/// vCard and set by the bot. A removed MUC avatar clears the Matrix room's avatar only when the bridge set it.
///
/// XMPP → Matrix only: changing a MUC's vCard needs its owner (XEP-0486 §4), and a Matrix room's own avatar is left
/// alone unless the MUC has one.
extension RoomStateMachine {
    /// The room avatar's state.
    struct RoomAvatarState: Sendable, Equatable {
        /// What the MUC last said about its avatar; nil: nothing yet.
        var announced: AvatarUpdate?
        /// The avatar the bridge set on the Matrix room (nil: none of ours), once the room's state is loaded.
        var applied: RoomAvatarRecord?
        var loaded = false
        /// The change whose outcome has not come back.
        var pending: RoomAvatarChange?
        /// The Matrix room refused the bot's change once: said once per portal, not at every announcement.
        var refusalLogged = false
    }

    /// A change of the Matrix room's avatar.
    struct RoomAvatarChange: Sendable, Equatable {
        /// The SHA-1 of the MUC's avatar to set; nil: the MUC has none any more.
        var sha1: String?
        /// The `mxc://` the bridge set before (a removal clears it only while the room still shows it).
        var ours: MXCURI?
    }

    /// How a ``RoomAvatarChange`` ended.
    enum RoomAvatarOutcome: Sendable, Equatable {
        /// Set (the record) or cleared / left to the Matrix room's own avatar (nil).
        case applied(RoomAvatarRecord?)
        /// The image could not be had from the room's vCard (logged where it failed).
        case notFetched
        case failed(MatrixFailure)
    }

    /// The MUC announced its avatar (disco#info or a presence from its bare JID; nil: it said nothing).
    mutating func avatarAnnounced(_ update: AvatarUpdate?) -> [Action] {
        guard configuration.avatars, let update, update != .notReady else { return [] }
        avatar.announced = update
        return syncRoomAvatar()
    }

    /// The room's stored state arrived: the avatar the bridge set before.
    mutating func avatarLoaded(_ record: RoomAvatarRecord?) -> [Action] {
        avatar.applied = record
        avatar.loaded = true
        return syncRoomAvatar()
    }

    /// The change the announced avatar asks for, if any.
    private func wantedRoomAvatarChange() -> RoomAvatarChange? {
        guard avatar.loaded, let announced = avatar.announced else { return nil }
        switch announced {
        case .photo(let sha1):
            return avatar.applied?.sha1 == sha1 ? nil : RoomAvatarChange(sha1: sha1, ours: avatar.applied?.mxc)
        case .none:
            return avatar.applied.map { RoomAvatarChange(sha1: nil, ours: $0.mxc) }
        case .notReady:
            return nil
        }
    }

    private mutating func syncRoomAvatar() -> [Action] {
        guard avatar.pending == nil, let change = wantedRoomAvatarChange() else { return [] }
        avatar.pending = change
        return [.setMatrixRoomAvatar(change)]
    }

    /// The change ended. A failed one is tried again at the next announcement (a newer one already in goes now).
    mutating func avatarSet(_ change: RoomAvatarChange, _ outcome: RoomAvatarOutcome) -> [Action] {
        avatar.pending = nil
        var actions: [Action] = []
        switch outcome {
        case .applied(let record):
            avatar.applied = record
            return syncRoomAvatar()
        case .notFetched:
            break
        case .failed(.refused) where avatar.refusalLogged:
            break
        case .failed(.refused(let reason)):
            avatar.refusalLogged = true
            actions = [.log(LogEntry(level: .warning, message: "The Matrix room refused the bridge's change of its avatar",
                                     metadata: ["error": reason]))]
        case .failed(.unavailable(let reason)):
            actions = [.log(LogEntry(level: .warning, message: "Could not set the Matrix room's avatar", metadata: ["error": reason]))]
        }
        return actions + (wantedRoomAvatarChange() == change ? [] : syncRoomAvatar())
    }
}
