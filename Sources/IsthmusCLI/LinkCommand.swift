import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import Matrix
import MatrixClient

/// `isthmus link MATRIX_ROOM MUC_JID`: links a Matrix room with a MUC.
///
/// Checks the Matrix side itself (the room exists; the bot is invited or may join) and makes the bot join, then
/// records the link as `pending`. `serve` joins the MUC (creating it as an instant room if needed) within seconds
/// when running, else at its next start.
struct LinkCommand: Subcommand {
    static let configuration = CommandConfiguration(
        name: "link",
        abstract: "Link a Matrix room with an XMPP MUC.",
        discussion: """
            MATRIX_ROOM is a room id (!…) or alias (#name:server). Invite the bridge bot to the room first (unless
            anyone may join it). The link starts as pending; `isthmus serve` joins the MUC (creating it if needed)
            within seconds when it runs, else at its next start. See `isthmus links`.
            """,
        arguments: [
            .init(name: "matrix-room", help: "The Matrix room: !room-id or #alias:server."),
            .init(name: "muc-jid", help: "The MUC: room@conference.example.org."),
        ])

    let room: LinkArguments.MatrixRoom
    let muc: JID

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requirePositionals(["matrix-room", "muc-jid"], command: Self.configuration.name)
        room = try LinkArguments.matrixRoom(arguments.positionals[0], command: Self.configuration.name)
        muc = try LinkArguments.muc(arguments.positionals[1], command: Self.configuration.name)
    }

    func run(_ context: CommandContext) async throws {
        let config = try context.loadConfig()
        let store = try context.openStore(config)
        let client = context.matrixClient(config)
        let bot = try context.ghostNamespace(config).botUserID
        if let existing = try await store.roomLinks().first(where: { $0.muc == muc.bare }) {
            throw CommandFailure("\(muc) is already linked with \(existing.matrixRoom)")
        }
        let roomID = try await context.resolve(room, client: client)
        if let existing = try await store.roomLinks().first(where: { $0.matrixRoom == roomID }) {
            throw CommandFailure("\(roomID) is already linked with \(existing.muc)")
        }
        do {
            _ = try await client.join(roomID, as: bot)
        } catch {
            throw CommandFailure(Self.describe(error, config: config, room: roomID, bot: bot))
        }
        var alias: RoomAlias?
        if case .alias(let given) = room { alias = given }
        do {
            try await store.insertRoomLink(RoomLink(matrixRoom: roomID, matrixAlias: alias, muc: muc.bare))
        } catch let conflict as RoomLinkConflict {
            switch conflict {
            case .matrixRoomAlreadyLinked(let other): throw CommandFailure("\(roomID) is already linked with \(other.muc)")
            case .mucAlreadyLinked(let other): throw CommandFailure("\(muc) is already linked with \(other.matrixRoom)")
            }
        }
        context.print("Linked \(roomID)\(alias.map { " (\($0))" } ?? "") with \(muc): pending until `isthmus serve` joins both sides.")
    }

    /// A one-line reason for a failed Matrix call in `link`.
    static func describe(_ error: MatrixError, config: Config?, room: RoomID? = nil, bot: UserID? = nil) -> String {
        switch error.kind {
        case .transport, .timeout:
            return "cannot reach the homeserver\(config.map { " at \($0.matrix.homeserverURL.absoluteString)" } ?? ""): \(error.message)"
        default:
            break
        }
        if error.errcode == .unknownToken || error.status == 401 {
            return "the homeserver rejected the appservice token (as_token): is the registration loaded?"
        }
        if let room, let bot {
            if error.errcode == .forbidden {
                return "the bridge bot \(bot) is not invited to \(room) and may not join it: invite it first"
            }
            if error.errcode == .notFound || error.status == 404 {
                return "unknown room: \(room) does not exist (or the homeserver knows no server for it)"
            }
        }
        return "the homeserver refused: \(error.errcode?.rawValue ?? "HTTP \(error.status ?? 0)"): \(error.message)"
    }
}
