import FoundationEssentials
import IsthmusCommon
import Synchronization
import MatrixClient

/// Matrix client mode (issue 28): the ``MatrixLink`` of an ordinary Matrix account, over a link that acts as that
/// account (an ``AppServiceMatrixLink`` on the account's own access token, whose "bot" is the account).
///
/// The bridge core still gives every XMPP occupant a ghost, but here a ghost is only a name: no such user exists on
/// the homeserver, and what the core asks a ghost to do the account does, or nobody does. Its messages, reactions,
/// redactions and topic changes go from the account (the message carries the occupant's MSC4144 profile, which the
/// portal machine adds: ``MatrixRelayFormat``); registering, naming, joining, leaving, inviting, typing and read
/// receipts of a ghost do nothing; a ghost's membership reads as joined; ghosts are left out of the power levels the
/// account sets; and a DM needs a ghost of its own, so it is refused (``RelayMatrixLinkError``). Matrix users are
/// handled as by the appservice: the account invites, kicks and bans them where it has the power.
public struct RelayMatrixLink: MatrixLink {
    /// The link acting as the account.
    let account: any MatrixLink
    /// Each ghost's avatar per room, as the avatar machine last set it: the `avatar_url` of its messages' profiles.
    private let avatars = GhostAvatars()

    public init(account: any MatrixLink) {
        self.account = account
    }

    public var botUserID: UserID { account.botUserID }

    public func ghostUserID(forIdentity identity: String) -> UserID? { account.ghostUserID(forIdentity: identity) }

    public func isGhost(_ user: UserID) -> Bool { account.isGhost(user) }

    /// Whom the homeserver sees act for `user`: the account for a ghost.
    private func actor(_ user: UserID) -> UserID { isGhost(user) ? botUserID : user }

    public func registerGhost(_ ghost: UserID) async throws {}

    public func setDisplayname(_ name: String, for user: UserID) async throws {
        // The account's own name is its owner's; a ghost has none to set.
    }

    public func join(_ room: RoomID, as user: UserID) async throws {
        guard !isGhost(user) else { return }
        try await account.join(room, as: user)
    }

    public func leave(_ room: RoomID, as user: UserID, reason: String?) async throws {
        guard !isGhost(user) else { return }
        try await account.leave(room, as: user, reason: reason)
    }

    public func remove(_ user: UserID, from room: RoomID, ban: Bool, reason: String?) async throws {
        guard !isGhost(user) else { return }
        try await account.remove(user, from: room, ban: ban, reason: reason)
    }

    /// An ordinary account seldom has the power to send state: a refusal leaves the room without `m.bridge` (which
    /// nothing the bridge does depends on) and is not an error here.
    public func setBridgeInfo(_ state: BridgeInfoState, in room: RoomID) async throws {
        do {
            try await account.setBridgeInfo(state, in: room)
        } catch let error as MatrixError where error.errcode == .forbidden {
            return
        }
    }

    public func setRoomDisplayname(_ name: String, for user: UserID, in room: RoomID) async throws {
        guard !isGhost(user) else { return }
        try await account.setRoomDisplayname(name, for: user, in: room)
    }

    /// A ghost's avatar is no member's: it goes into the `avatar_url` of the ghost's messages' profiles from now on.
    public func setRoomAvatar(_ mxc: MXCURI?, for user: UserID, in room: RoomID) async throws {
        guard !isGhost(user) else { return avatars.set(mxc, for: user, in: room) }
        try await account.setRoomAvatar(mxc, for: user, in: room)
    }

    public func setRoomPicture(_ mxc: MXCURI?, in room: RoomID) async throws {
        try await account.setRoomPicture(mxc, in: room)
    }

    /// Never: Matrix client mode does not take part in encrypted rooms (the config refuses `encryption.allow` with it).
    public func encryptsFiles(in room: RoomID, as user: UserID) async throws -> Bool { false }

    public func roomPicture(_ room: RoomID) async throws -> MXCURI? {
        try await account.roomPicture(room)
    }

    public func send(_ message: OutgoingMatrixMessage, as user: UserID, in room: RoomID, txnID: ClientTransactionID,
                     timestamp: Date?) async throws -> EventID {
        // An ordinary account cannot set origin_server_ts (`ts` is an appservice's privilege): the event takes its time.
        var message = message
        if isGhost(user), message.profile != nil { message.profile?.avatarURL = avatars.avatar(of: user, in: room)?.description }
        return try await waitingWhileRemoved(from: room) { [message] in
            try await account.send(message, as: actor(user), in: room, txnID: txnID, timestamp: nil)
        }
    }

    public func react(to target: EventID, key: String, as user: UserID, in room: RoomID, txnID: ClientTransactionID,
                      timestamp: Date?) async throws -> EventID? {
        try await waitingWhileRemoved(from: room) {
            try await account.react(to: target, key: key, as: actor(user), in: room, txnID: txnID, timestamp: nil)
        }
    }

    public func redact(_ event: EventID, reason: String?, as user: UserID, in room: RoomID, txnID: ClientTransactionID) async throws -> EventID {
        try await waitingWhileRemoved(from: room) {
            try await account.redact(event, reason: reason, as: actor(user), in: room, txnID: txnID)
        }
    }

    /// The account's call, refused (`M_FORBIDDEN`) in a room it is no longer in — kicked, banned, or it left: the call
    /// waits as during an outage (``MatrixLinkError/unavailable(_:)``), so nothing an occupant said is dropped, until
    /// someone invites the account again (the sync accepts an invitation into a linked room and the room catches up).
    /// Refused while it is still in the room (it may not speak there), the refusal stands.
    private func waitingWhileRemoved<T>(from room: RoomID, _ call: () async throws -> T) async throws -> T {
        do {
            return try await call()
        } catch let refusal as MatrixError where refusal.errcode == .forbidden {
            // Its own membership; unreadable (a room it was banned from may hide even that) counts as not joined.
            guard (try? await account.membership(of: botUserID, in: room, as: botUserID)) == .join else {
                throw MatrixLinkError.unavailable("the bridge's Matrix account \(botUserID) is not in the room: "
                                                  + "messages wait until someone invites it again")
            }
            throw refusal
        }
    }

    public func setTopic(_ topic: String, in room: RoomID, as user: UserID) async throws {
        try await account.setTopic(topic, in: room, as: actor(user))
    }

    public func setRoomName(_ name: String, in room: RoomID) async throws {
        try await account.setRoomName(name, in: room)
    }

    public func joinReplacement(_ room: RoomID, via servers: [String]) async throws -> RoomID? {
        try await account.joinReplacement(room, via: servers)
    }

    public func createDirectRoom(as creator: UserID, inviting user: UserID) async throws -> RoomID {
        throw RelayMatrixLinkError.directChatsUnsupported
    }

    public func membership(of user: UserID, in room: RoomID, as viewer: UserID) async throws -> Membership? {
        guard !isGhost(user) else { return .join }
        return try await account.membership(of: user, in: room, as: actor(viewer))
    }

    public func invite(_ user: UserID, to room: RoomID, reason: String?) async throws {
        guard !isGhost(user) else { return }
        try await account.invite(user, to: room, reason: reason)
    }

    public func roomPowerState(_ room: RoomID) async throws -> RoomPowerState {
        try await account.roomPowerState(room)
    }

    /// The content without ghosts in `users`: they are no users on this homeserver.
    public func setPowerLevels(_ content: JSONValue, in room: RoomID) async throws {
        guard case .object(var fields) = content, case .object(let users)? = fields["users"] else {
            return try await account.setPowerLevels(content, in: room)
        }
        fields["users"] = .object(users.filter { key, _ in UserID(key).map { !isGhost($0) } ?? true })
        try await account.setPowerLevels(.object(fields), in: room)
    }

    public func joinedMembers(_ room: RoomID) async throws -> JoinedMembers {
        try await account.joinedMembers(room)
    }

    /// A ghost's typing notice would be the account's: none is sent (typing and read markers are off in this mode).
    public func setTyping(_ typing: Bool, as user: UserID, in room: RoomID, timeout: Duration) async throws {
        guard !isGhost(user) else { return }
        try await account.setTyping(typing, as: user, in: room, timeout: timeout)
    }

    public func sendReadReceipt(for event: EventID, as user: UserID, in room: RoomID) async throws {
        guard !isGhost(user) else { return }
        try await account.sendReadReceipt(for: event, as: user, in: room)
    }

    public func timeline(_ room: RoomID, from token: String?, limit: Int) async throws -> MatrixTimelinePage {
        try await account.timeline(room, from: token, limit: limit)
    }
}

/// What the account cannot do for a ghost.
public enum RelayMatrixLinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A DM with an XMPP user needs a Matrix user for them; in client mode there is none.
    case directChatsUnsupported

    public var description: String {
        switch self {
        case .directChatsUnsupported:
            "private chats with XMPP users need the bridge's application service (matrix.mode: appservice): an ordinary "
                + "Matrix account has no user to give them"
        }
    }
}

/// The ghosts' avatars per room (Matrix client mode keeps them for the profiles; no store: the avatar machine sets them
/// again at every activation). Thread-safe.
final class GhostAvatars: Sendable {
    private let byRoom = Mutex<[RoomID: [UserID: MXCURI]]>([:])

    func set(_ mxc: MXCURI?, for ghost: UserID, in room: RoomID) {
        byRoom.withLock { $0[room, default: [:]][ghost] = mxc }
    }

    func avatar(of ghost: UserID, in room: RoomID) -> MXCURI? {
        byRoom.withLock { $0[room]?[ghost] }
    }
}
