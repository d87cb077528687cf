import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// `isthmus links [--json]`: lists linked rooms and their status.
struct LinksCommand: Subcommand {
    static let configuration = CommandConfiguration(
        name: "links",
        abstract: "List linked rooms and their status.",
        discussion: """
            Plain output has one line per link: ROOM_ID MUC_JID STATUS. STATUS is pending (serve has not yet joined
            both sides), active, error (with the reason after it) or unlinking. The link's opt-ins follow in braces:
            sync-name (the MUC's name is copied to the Matrix room) and matrix-moderators (Matrix moderators are MUC
            moderators). A link the bridge opened itself, when a Matrix user joined a MUC's gateway alias, ends in
            [dynamic].
            """,
        options: [.init(long: "json", help: "Print a JSON array of {matrix_room, matrix_alias, muc, status, detail, archive, sync_name, matrix_moderators, kind}.")])

    let json: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requirePositionals([], command: Self.configuration.name)
        json = arguments.flag("json")
    }

    func run(_ context: CommandContext) async throws {
        let config = try context.loadConfig()
        let store = try context.openStore(config)
        let links = try await store.roomLinks()
        if json {
            context.print(try LinkListing.json(links))
        } else {
            for link in links { context.print(LinkListing.line(link)) }
        }
    }
}

/// Renders links for `isthmus links`. Pure.
enum LinkListing {
    struct Entry: Encodable {
        var matrix_room: String
        var matrix_alias: String?
        var muc: String
        var status: String
        var detail: String?
        /// false: the MUC keeps no archive with stanza-ids (no catch-up after downtime); absent: not known yet.
        var archive: Bool?
        /// `link --sync-name`: the MUC's name is copied to the Matrix room.
        var sync_name: Bool
        /// `link --matrix-moderators`: Matrix moderators' occupants get the MUC moderator role.
        var matrix_moderators: Bool
        /// `static` (linked by someone) or `dynamic` (opened through a gateway alias).
        var kind: String
    }

    static func status(_ link: RoomLink) -> String { link.unlinking ? "unlinking" : link.status.rawValue }

    static func line(_ link: RoomLink) -> String {
        var line = "\(link.matrixRoom) \(link.muc) \(status(link))"
        if link.status == .error, let detail = link.detail { line += " (\(detail))" }
        if link.archive == false { line += " [no archive: no catch-up after downtime]" }
        let optIns = [link.syncName ? "sync-name" : nil, link.matrixModeratorsToMUC ? "matrix-moderators" : nil].compactMap { $0 }
        if !optIns.isEmpty { line += " {\(optIns.joined(separator: ", "))}" }
        if link.kind == .dynamic { line += " [dynamic]" }
        return line
    }

    static func json(_ links: [RoomLink]) throws -> String {
        let entries = links.map {
            Entry(matrix_room: $0.matrixRoom.rawValue, matrix_alias: $0.matrixAlias?.rawValue, muc: $0.muc.description,
                  status: status($0), detail: $0.status == .error ? $0.detail : nil, archive: $0.archive,
                  sync_name: $0.syncName, matrix_moderators: $0.matrixModeratorsToMUC, kind: $0.kind.rawValue)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(entries), as: UTF8.self)
    }
}
