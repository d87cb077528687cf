import Bridge
import IsthmusCommon

/// `isthmus unlink MATRIX_ROOM|MUC_JID`: ends a link. `serve` cleans up both sides (now, or at its next start).
struct UnlinkCommand: Subcommand {
    static let configuration = CommandConfiguration(
        name: "unlink",
        abstract: "Unlink a Matrix room from its XMPP MUC.",
        discussion: """
            Ghosts leave the Matrix room, Matrix users' occupants and the bridge leave the MUC, and the bot leaves the
            Matrix room; nothing more is bridged. `isthmus serve` does the clean-up within seconds when it runs, else
            at its next start.
            """,
        arguments: [.init(name: "room", help: "The Matrix room (!room-id or #alias:server) or the MUC JID.")])

    enum Target: Sendable {
        case matrix(LinkArguments.MatrixRoom)
        case muc(JID)
    }

    let target: Target

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requirePositionals(["room"], command: Self.configuration.name)
        let text = arguments.positionals[0]
        if text.hasPrefix("!") || text.hasPrefix("#") {
            target = .matrix(try LinkArguments.matrixRoom(text, command: Self.configuration.name))
        } else {
            target = .muc(try LinkArguments.muc(text, command: Self.configuration.name))
        }
    }

    func run(_ context: CommandContext) async throws {
        let config = try context.loadConfig()
        let service = try context.linkService(config)
        let link = try await context.linking(config) {
            switch target {
            case .muc(let muc): try await service.unlink(muc: muc)
            case .matrix(let room): try await service.unlink(room)
            }
        }
        context.print("Unlinking \(link.matrixRoom) from \(link.muc): `isthmus serve` cleans up both sides.")
    }
}
