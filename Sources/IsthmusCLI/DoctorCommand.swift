import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import Bridge
import XMPPClient
import XMPPComponent

/// `isthmus doctor`: checks both servers with the configured secrets and says plainly what works and what does not.
struct DoctorCommand: Subcommand {
    static let configuration = CommandConfiguration(
        name: "doctor",
        abstract: "Check the XMPP server and the homeserver; say plainly what works and what does not.",
        discussion: """
            XMPP: connects as the component with the configured secret; in client mode logs in as the account (TLS and
            its certificate, the login, XEP-0198 resumption). Matrix: the homeserver answers, it accepts the
            as_token, and an appservice ping makes it reach the listener (started for the check, so run doctor while
            `serve` is stopped); in Matrix client mode, the logins it offers and whether it accepts the stored session
            (never refreshed by doctor), and that the account is in every linked room. Links: each linked room whose MUC keeps no archive is named (warn), since nothing sent
            there while the bridge is down can be caught up. Store: which backend, that it connects (PostgreSQL: the server's
            version) and the migrations applied. Lease: with ha.enabled, which instance of the pair is active.
            Encryption (encryption.allow): whether the pickle key opens the kept devices, and a to-device probe to a
            ghost's device that must come back to the listener (so, again, with serve stopped).
            Exit status 1 when any check fails.
            """)

    init(_ arguments: ParsedArguments) throws(UsageError) {
        try arguments.requirePositionals([], command: Self.configuration.name)
    }

    func run(_ context: CommandContext) async throws {
        let config = try context.loadConfig()
        let quiet = context.logger(config, label: "doctor")
        let xmpp: [DoctorFinding]
        if let client = config.xmpp.client {
            xmpp = await ClientDoctor.check(configuration: BridgeRuntime.clientConfiguration(client), logger: quiet)
        } else {
            xmpp = await XMPPDoctor.check(
                configuration: ComponentConfiguration(host: config.xmpp.serverHost, port: config.xmpp.serverPort,
                                                      componentDomain: config.xmpp.componentDomain,
                                                      secret: config.xmpp.componentSecret),
                logger: quiet)
        }
        let probe = await probeTarget(config, context)
        let matrix = await MatrixDoctor.check(config: config, logger: quiet, probe: probe)
        let probed = matrix.contains { $0.check == ToDeviceProbe.check }
        let findings = xmpp + matrix + (try await storeFindings(config, context, probed: probed))
        for finding in findings {
            context.print("\(finding.ok ? (finding.warning ? "warn" : "ok  ") : "FAIL") \(finding.check): \(finding.detail)")
        }
        let failed = findings.filter { !$0.ok }.count
        if failed > 0 {
            throw CommandFailure("\(failed) of \(findings.count) checks failed")
        }
        context.print("All \(findings.count) checks passed.")
    }

    /// With `encryption.allow` (the appservice): a ghost device the store keeps, where the to-device probe goes; nil
    /// when there is none yet or no store to read (its own findings say why). Nothing is created or migrated.
    private func probeTarget(_ config: Config, _ context: CommandContext) async -> (user: UserID, device: DeviceID)? {
        guard config.encryption.allow, config.matrix.client == nil, let bot = UserID(config.botUserID) else { return nil }
        if let path = config.database.path, !FileManager.default.fileExists(atPath: path) { return nil }
        guard let diagnosis = try? Store.diagnose(config.database.location), diagnosis.pending.isEmpty, diagnosis.unknown.isEmpty,
              let store = try? context.openStore(config) else { return nil }
        let target = (try? await store.createdGhostDevice(preferring: bot)) ?? nil
        await store.close()
        return target
    }

    /// The store (which backend, that it answers, its migrations), then what it knows about the links (`serve` records
    /// each MUC's archive at activation). Nothing is created or migrated: doctor before the first `serve` must not
    /// make a database.
    private func storeFindings(_ config: Config, _ context: CommandContext, probed: Bool) async throws -> [DoctorFinding] {
        let location = config.database.location
        if let path = config.database.path, !FileManager.default.fileExists(atPath: path) {
            return [DoctorFinding(ok: true, check: "store", detail: "sqlite \(path) does not exist yet (serve creates it)")]
        }
        let diagnosis: StoreDiagnosis
        do {
            diagnosis = try Store.diagnose(location)
        } catch {
            return [DoctorFinding(ok: false, check: "store", detail: "cannot open \(location): \(error)")]
        }
        let where_ = diagnosis.backend == .sqlite ? "sqlite \(config.database.path ?? "")" : "\(location)"
        let migrations = "migrations applied: \(diagnosis.applied.isEmpty ? "none" : diagnosis.applied.map(String.init).joined(separator: ","))"
        let server = diagnosis.backend == .sqlite ? "SQLite \(diagnosis.serverVersion)" : "connects, PostgreSQL \(diagnosis.serverVersion)"
        if !diagnosis.unknown.isEmpty {
            return [DoctorFinding(ok: false, check: "store", detail: "\(where_): \(server); \(migrations) — "
                                  + "\(diagnosis.unknown.map(String.init).joined(separator: ",")) unknown to this version (a newer one migrated it)")]
        }
        var findings = [DoctorFinding(ok: true, check: "store", detail: "\(where_): \(server); \(migrations)"
                                      + (diagnosis.pending.isEmpty ? "" : " (serve applies the rest at start)"))]
        guard diagnosis.pending.isEmpty else { return findings }
        let store = try context.openStore(config)
        findings += LinkDoctor.findings(try await store.roomLinks())
        findings += LeaseDoctor.findings(try await store.currentLease(), haEnabled: config.ha.enabled)
        if config.encryption.allow {
            findings += EncryptionDoctor.findings(config.encryption, devices: try await store.ghostDeviceCount(),
                                                  sample: try await store.anyGhostDevice(), probed: probed)
        }
        return findings
    }
}
