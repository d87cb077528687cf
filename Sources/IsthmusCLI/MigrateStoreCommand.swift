import FoundationEssentials
import IsthmusCommon
import IsthmusStore

/// `isthmus migrate-store --from sqlite:PATH --to postgresql://…`: copies the bridge's database to another one while
/// `serve` is stopped (``StoreCopy`` does the work; this parses, prints and explains).
struct MigrateStoreCommand: Subcommand {
    static let configuration = CommandConfiguration(
        name: "migrate-store",
        abstract: "Copy the bridge's database to another database (SQLite to PostgreSQL).",
        discussion: """
            Stop isthmus serve first (a SQLite file that another process has open is refused). Both databases are first \
            migrated to this version's schema, as serve would. The target must hold no bridge rows. Every table is \
            copied in one transaction, then read back: the row counts and checksums printed are verified equal. \
            Afterwards, set database.url in the config (instead of database.path) and start serve. Passwords in \
            URLs are never printed.
            """,
        options: [
            .init(long: "from", valueName: "<database>", help: "The source: sqlite:PATH or a postgresql:// URL."),
            .init(long: "to", valueName: "<database>", help: "The target: a postgresql:// URL or sqlite:PATH."),
            .init(long: "dry-run", help: "Check both databases and print the source's row counts; copy nothing."),
        ])

    let source: DatabaseLocation
    let target: DatabaseLocation
    let dryRun: Bool

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let name = Self.configuration.name
        try arguments.requirePositionals([], command: name)
        guard let from = arguments.options["from"] else { throw UsageError("Missing expected option '--from'.", command: name) }
        guard let to = arguments.options["to"] else { throw UsageError("Missing expected option '--to'.", command: name) }
        source = try Self.location(from, option: "from")
        target = try Self.location(to, option: "to")
        dryRun = arguments.flag("dry-run")
    }

    /// `sqlite:PATH` (made absolute against the working directory) or a `postgresql://`/`postgres://` URL.
    static func location(_ text: String, option: String) throws(UsageError) -> DatabaseLocation {
        if text.hasPrefix("sqlite:") {
            let path = String(text.dropFirst("sqlite:".count))
            guard !path.isEmpty else {
                throw UsageError("The value of '--\(option)' needs a path after sqlite:.", command: configuration.name)
            }
            return .sqlite(path: path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path)
        }
        if let url = PostgresURL(text) { return .postgres(url: url, poolSize: 1) }
        // Never echo the value: it may be a URL with a password in it.
        throw UsageError("The value of '--\(option)' must be sqlite:PATH or a postgresql:// URL.", command: configuration.name)
    }

    func run(_ context: CommandContext) async throws {
        context.print((dryRun ? "Checking" : "Copying") + " \(source) to \(target)")
        let report: StoreCopyReport
        do {
            // Blocks this thread until done: a one-shot command with nothing else to run meanwhile.
            report = try StoreCopy.run(from: source, to: target, dryRun: dryRun)
        } catch {
            throw CommandFailure(error.description)
        }
        let width = max(5, report.tables.map(\.name.count).max() ?? 0)
        context.print(Self.padded("table", width) + "  " + Self.leftPadded("rows", 10) + (dryRun ? "" : "  checksum"))
        for table in report.tables {
            context.print(Self.padded(table.name, width) + "  " + Self.leftPadded("\(table.rows)", 10)
                          + (dryRun ? "" : "  \(table.checksumHex)"))
        }
        if dryRun {
            context.print("Dry run: \(report.totalRows) rows in \(report.tables.count) tables would be copied; "
                          + "the target has no bridge rows and both are at schema version \(report.schemaVersion). No rows were written.")
        } else {
            context.print("Copied \(report.totalRows) rows in \(report.tables.count) tables; the target's row counts and "
                          + "checksums match the source's.")
            context.print("Next: point the config at the target (database.url, without database.path) and start isthmus serve.")
        }
    }

    private static func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    private static func leftPadded(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
