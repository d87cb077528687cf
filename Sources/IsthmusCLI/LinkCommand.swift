import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import Bridge

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
        ],
        options: [
            .init(long: "matrix-moderators",
                  help: "Give Matrix users with power level 50 or more the MUC moderator role (never an affiliation)."),
            .init(long: "sync-name", help: "Copy the MUC's name to the Matrix room's name (default: the Matrix room keeps its own)."),
        ])

    let room: LinkArguments.MatrixRoom
    let muc: JID
    let matrixModerators: Bool
    /// `--sync-name`: the MUC's name becomes the Matrix room's.
    let syncName: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requirePositionals(["matrix-room", "muc-jid"], command: Self.configuration.name)
        room = try LinkArguments.matrixRoom(arguments.positionals[0], command: Self.configuration.name)
        muc = try LinkArguments.muc(arguments.positionals[1], command: Self.configuration.name)
        matrixModerators = arguments.flag("matrix-moderators")
        syncName = arguments.flag("sync-name")
    }

    func run(_ context: CommandContext) async throws {
        let config = try context.loadConfig()
        let service = try context.linkService(config)
        let link = try await context.linking(config) {
            try await service.link(room, muc: muc, matrixModeratorsToMUC: matrixModerators, syncName: syncName)
        }
        context.print("Linked \(link.matrixRoom)\(link.matrixAlias.map { " (\($0))" } ?? "") with \(link.muc): pending until `isthmus serve` joins both sides.")
    }
}
