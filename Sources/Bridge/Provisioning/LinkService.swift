import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixClient

/// Making and ending links: the checks and effects shared by `isthmus link/unlink`, the provisioning HTTP API and the
/// Matrix `!isthmus` commands. Does I/O (homeserver and store); runs on the caller's task.
///
/// A link is checked on the Matrix side (the room exists; the bot is invited or may join, and joins), then recorded
/// `pending`; a running bridge picks it up from the store within a second. An unlink marks the row; the portal
/// cleans up both sides.
public struct LinkService: Sendable {
    /// A Matrix room as given: an id or an alias.
    public enum MatrixRoom: Sendable, Equatable, CustomStringConvertible {
        case id(RoomID)
        case alias(RoomAlias)

        /// `!id` or `#alias:server`; nil for anything else.
        public init?(_ text: String) {
            if text.hasPrefix("!"), let id = RoomID(text) {
                self = .id(id)
            } else if text.hasPrefix("#"), let alias = RoomAlias(text) {
                self = .alias(alias)
            } else {
                return nil
            }
        }

        public var description: String {
            switch self {
            case .id(let id): id.rawValue
            case .alias(let alias): alias.rawValue
            }
        }
    }

    let store: Store
    let client: MatrixClient
    let bot: UserID
    /// MUC services a link may use; nil: any.
    let allowedMUCDomains: Set<String>?
    /// `encryption:`: whether encrypted rooms may be linked (the ghosts decrypt and encrypt with their own devices),
    /// and whether only they may.
    let encryptedRooms: EncryptedRoomPolicy

    public init(store: Store, client: MatrixClient, bot: UserID, allowedMUCDomains: Set<String>? = nil,
                encryptedRooms: EncryptedRoomPolicy = .refused) {
        self.encryptedRooms = encryptedRooms
        self.store = store
        self.client = client
        self.bot = bot
        self.allowedMUCDomains = allowedMUCDomains
    }

    /// Every link, oldest first.
    public func links() async throws -> [RoomLink] { try await store.roomLinks() }

    /// Links `room` with `muc`: the bot joins the room, and the link is recorded `pending`. Returns the new link.
    /// `matrixModeratorsToMUC`: the opt-in that gives Matrix moderators' occupants the MUC moderator role.
    /// `syncName`: the MUC's name is copied to the Matrix room (``RoomLink/syncName``).
    public func link(_ room: MatrixRoom, muc: JID, matrixModeratorsToMUC: Bool = false, syncName: Bool = false) async throws -> RoomLink {
        let muc = muc.bare
        if let allowed = allowedMUCDomains, !allowed.contains(muc.domain) { throw LinkRefusal.mucDomainNotAllowed(muc) }
        if let existing = try await store.roomLinks().first(where: { $0.muc == muc }) {
            throw LinkRefusal.mucAlreadyLinked(muc, with: existing.matrixRoom)
        }
        let roomID = try await resolve(room)
        if let existing = try await store.roomLinks().first(where: { $0.matrixRoom == roomID }) {
            throw LinkRefusal.roomAlreadyLinked(roomID, with: existing.muc)
        }
        do {
            _ = try await client.join(roomID, as: bot)
        } catch {
            throw Self.refusal(error, room: roomID, bot: bot)
        }
        if encryptedRooms != .allowed { try await checkEncryption(of: roomID) }
        var alias: RoomAlias?
        if case .alias(let given) = room { alias = given }
        let link = RoomLink(matrixRoom: roomID, matrixAlias: alias, muc: muc, matrixModeratorsToMUC: matrixModeratorsToMUC,
                            syncName: syncName)
        do {
            try await store.insertRoomLink(link)
        } catch let conflict as RoomLinkConflict {
            switch conflict {
            case .matrixRoomAlreadyLinked(let other): throw LinkRefusal.roomAlreadyLinked(roomID, with: other.muc)
            case .mucAlreadyLinked(let other): throw LinkRefusal.mucAlreadyLinked(muc, with: other.matrixRoom)
            }
        }
        return link
    }

    /// Refuses a room whose encryption the policy does not accept (read as the bot, once it is joined): without
    /// `encryption.allow`, an encrypted room (nothing said in it could be bridged); with `encryption.require`, an
    /// unencrypted one. The bot leaves it again.
    private func checkEncryption(of room: RoomID) async throws(LinkRefusal) {
        let encryption: JSONValue?
        do {
            encryption = try await client.stateEvent(JSONValue.self, type: MatrixEventType.encryption, in: room, as: bot)
        } catch {
            throw Self.refusal(error, room: room, bot: bot)
        }
        guard !encryptedRooms.accepts(encrypted: encryption != nil) else { return }
        if encryption != nil {
            try? await client.leave(room, as: bot, reason: "This bridge cannot read encrypted messages.")
            throw .encryptedRoom(room)
        }
        try? await client.leave(room, as: bot, reason: "This bridge only bridges encrypted rooms.")
        throw .unencryptedRoom(room)
    }

    /// Marks the link of `room` (by id, by the alias it was linked under, or by resolving the alias) for unlinking.
    /// Returns the link.
    public func unlink(_ room: MatrixRoom) async throws -> RoomLink {
        let links = try await store.roomLinks()
        let link: RoomLink?
        switch room {
        case .id(let id):
            link = links.first { $0.matrixRoom == id }
        case .alias(let alias):
            if let byAlias = links.first(where: { $0.matrixAlias == alias }) {
                link = byAlias
            } else {
                let id = try await resolve(room)
                link = links.first { $0.matrixRoom == id }
            }
        }
        guard let link else { throw LinkRefusal.notLinked(room.description) }
        return try await markUnlinking(link, target: room.description)
    }

    /// Marks the link of `muc` for unlinking. Returns the link.
    public func unlink(muc: JID) async throws -> RoomLink {
        guard let link = try await store.roomLinks().first(where: { $0.muc == muc.bare }) else {
            throw LinkRefusal.notLinked(muc.description)
        }
        return try await markUnlinking(link, target: muc.description)
    }

    private func markUnlinking(_ link: RoomLink, target: String) async throws -> RoomLink {
        guard try await store.markUnlinking(matrixRoom: link.matrixRoom) != nil else { throw LinkRefusal.notLinked(target) }
        return link
    }

    /// The room id of `room` (aliases through the homeserver).
    public func resolve(_ room: MatrixRoom) async throws(LinkRefusal) -> RoomID {
        switch room {
        case .id(let id):
            return id
        case .alias(let alias):
            do {
                return try await client.resolveAlias(alias).roomID
            } catch {
                if error.errcode == .notFound || error.status == 404 { throw .unknownAlias(alias) }
                throw Self.refusal(error, room: nil, bot: nil)
            }
        }
    }

    /// The refusal a failed homeserver call stands for.
    static func refusal(_ error: MatrixError, room: RoomID?, bot: UserID?) -> LinkRefusal {
        switch error.kind {
        case .transport, .timeout: return .homeserverUnreachable(error.message)
        default: break
        }
        if error.errcode == .unknownToken || error.status == 401 { return .tokenRejected }
        if let room, let bot {
            if error.errcode == .forbidden { return .botCannotJoin(room, bot: bot) }
            if error.errcode == .notFound || error.status == 404 { return .unknownRoom(room) }
        }
        return .homeserverRefused(errcode: error.errcode?.rawValue ?? "HTTP \(error.status ?? 0)", message: error.message)
    }
}
