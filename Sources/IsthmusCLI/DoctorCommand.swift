import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import XMPPComponent

/// `isthmus doctor`: checks both servers with the configured secrets and says plainly what works and what does not.
struct DoctorCommand: Subcommand {
    static let configuration = CommandConfiguration(
        name: "doctor",
        abstract: "Check the XMPP server and the homeserver; say plainly what works and what does not.",
        discussion: """
            XMPP: connects as the component with the configured secret. Matrix: the homeserver answers, it accepts the
            as_token, and an appservice ping makes it reach the listener (started for the check, so run doctor while
            `serve` is stopped). Links: each linked room whose MUC keeps no archive is named (warn), since nothing sent
            there while the bridge is down can be caught up. Lease: with ha.enabled, which instance of the pair is active.
            Exit status 1 when any check fails.
            """)

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requirePositionals([], command: Self.configuration.name)
    }

    func run(_ context: CommandContext) async throws {
        let config = try context.loadConfig()
        let quiet = context.logger(config, label: "doctor")
        let xmpp = await XMPPDoctor.check(
            configuration: ComponentConfiguration(host: config.xmpp.serverHost, port: config.xmpp.serverPort,
                                                  componentDomain: config.xmpp.componentDomain,
                                                  secret: config.xmpp.componentSecret),
            logger: quiet)
        let matrix = await MatrixDoctor.check(config: config, logger: quiet)
        let findings = xmpp + matrix + (try await linkFindings(config, context))
        for finding in findings {
            context.print("\(finding.ok ? (finding.warning ? "warn" : "ok  ") : "FAIL") \(finding.check): \(finding.detail)")
        }
        let failed = findings.filter { !$0.ok }.count
        if failed > 0 {
            throw CommandFailure("\(failed) of \(findings.count) checks failed")
        }
        context.print("All \(findings.count) checks passed.")
    }

    /// What the store knows about the links (`serve` records each MUC's archive at activation); nothing when there is
    /// no database yet (doctor before the first `serve` must not create one).
    private func linkFindings(_ config: Config, _ context: CommandContext) async throws -> [DoctorFinding] {
        guard FileManager.default.fileExists(atPath: config.database.path) else { return [] }
        let store = try context.openStore(config)
        return LinkDoctor.findings(try await store.roomLinks())
            + LeaseDoctor.findings(try await store.currentLease(), haEnabled: config.ha.enabled)
    }
}
