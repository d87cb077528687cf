import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import Matrix
import MatrixAppService
import MatrixClient

/// The Matrix half of `isthmus doctor`: the homeserver answers, it accepts the as_token (whoami as the bot), and a
/// ping makes it reach the appservice listener. Does network I/O; starts a listener on `appservice.listen` for the
/// ping (or pings the one already running there, e.g. `isthmus serve`). In client mode, ``MatrixAccountDoctor``'s checks.
public enum MatrixDoctor {
    /// Runs the checks in order and says what each found. Never throws; a failure is a finding with `ok == false`.
    /// `probe`: with `encryption.allow`, the ghost device a to-device probe goes to once the ping went through.
    public static func check(config: Config, logger: Logger, timeout: Duration = .seconds(10),
                             probe: (user: UserID, device: DeviceID)? = nil) async -> [DoctorFinding] {
        if let account = config.matrix.client {
            return await MatrixAccountDoctor.check(config: config, account: account, logger: logger, timeout: timeout)
        }
        let client = client(config, token: config.appservice.asToken, logger: logger, timeout: timeout)
        let reachable = await homeserverFinding(client, config: config)
        guard reachable.ok else { return [reachable] }
        var findings = [reachable]

        let bot = config.botUserID
        do {
            let user = try await client.whoAmI()
            let ok = user.rawValue == bot
            findings.append(DoctorFinding(ok: ok, check: "matrix.as_token", detail: ok
                ? "the homeserver accepts the as_token as \(bot)"
                : "the as_token belongs to \(user), not to the bot \(bot): check appservice.bot_localpart and the registration"))
        } catch {
            let hint = error.errcode == MatrixErrorCode.unknownToken
                ? "the homeserver does not know this as_token: give it the registration from `isthmus registration` and restart it"
                : "whoami with the as_token failed: \(error.errcode ?? "") \(error.message)"
            findings.append(DoctorFinding(ok: false, check: "matrix.as_token", detail: hint))
            return findings
        }

        findings += await listenerFindings(config: config, client: client, logger: logger,
                                           probe: probe.map { ToDeviceProbe(user: $0.user, device: $0.device) })
        return findings
    }

    /// A client for doctor's calls: one attempt each (a few short rate-limit waits).
    static func client(_ config: Config, token: String, logger: Logger, timeout: Duration) -> MatrixClient {
        MatrixClient(configuration: .init(
            homeserverURL: config.matrix.homeserverURL, accessToken: token, requestTimeout: timeout,
            retryPolicy: RetryPolicy(maxAttempts: 1, maxRateLimitWaits: 2, maxRateLimitWait: .seconds(5))), logger: logger)
    }

    /// Whether the homeserver answers (`GET /_matrix/client/versions`).
    static func homeserverFinding(_ client: MatrixClient, config: Config) async -> DoctorFinding {
        let homeserver = config.matrix.homeserverURL.absoluteString
        do {
            let versions = try await client.versions()
            return DoctorFinding(ok: true, check: "matrix.homeserver",
                                 detail: "the homeserver at \(homeserver) answers (spec versions up to \(versions.last ?? "unknown"))")
        } catch {
            let detail = error.kind == .unusable
                ? "the homeserver at \(homeserver) cannot be used: \(error.message)"   // certificate of HOST not accepted: …
                : "the homeserver at \(homeserver) does not answer: \(error.message)"
            return DoctorFinding(ok: false, check: "matrix.homeserver", detail: detail)
        }
    }

    /// The ping, and with `probe` the to-device probe, while doctor's listener runs (or the one already there).
    private static func listenerFindings(config: Config, client: MatrixClient, logger: Logger, probe: ToDeviceProbe?) async -> [DoctorFinding] {
        let listen = config.appservice.listen
        var listener: AppServiceListener?
        var note = "a listener started for the check on \(listen)"
        do {
            listener = try AppServiceListener(
                configuration: .init(host: listen.host, port: listen.port, hsToken: config.appservice.hsToken),
                handler: DoctorHandler(probe: probe), logger: logger)
        } catch where error.isAddressInUse {
            note = "the listener already running on \(listen)"
        } catch {
            return [DoctorFinding(ok: false, check: "matrix.appservice_ping", detail: "cannot listen on \(listen): \(error)")]
        }
        return await withDiscardingTaskGroup { group in
            if let listener { group.addTask { await listener.run() } }
            defer { listener?.shutdown() }
            let ping = await pingFinding(config: config, client: client, note: note)
            guard ping.ok, let probe else { return [ping] }
            guard listener != nil else {
                return [ping, DoctorFinding(ok: true, check: ToDeviceProbe.check, detail: "not checked: serve is running and takes the "
                                            + "transactions; run doctor while serve is stopped to check to-device delivery", warning: true)]
            }
            return [ping, await probe.run(client, bot: UserID(config.botUserID) ?? probe.target.user)]
        }
    }

    private static func pingFinding(config: Config, client: MatrixClient, note: String) async -> DoctorFinding {
        // Synapse sometimes fails a ping with 502 (M_CONNECTION_FAILED, "AlreadyCancelled") while it is retrying
        // transactions it queued for this appservice: try a few times before calling the listener unreachable.
        var attempt = 0
        while true {
            attempt += 1
            do throws(MatrixError) {
                let roundTrip = try await client.ping(appServiceID: config.appservice.id, transactionID: "isthmus-doctor-" + Digest.randomHex(bytes: 4))
                return DoctorFinding(ok: true, check: "matrix.appservice_ping", detail:
                    "the homeserver reached \(note) at \(config.appservice.url.absoluteString) in \(roundTrip.components.seconds * 1000 + roundTrip.components.attoseconds / 1_000_000_000_000_000) ms")
            } catch {
                if error.errcode == .connectionFailed, attempt < 5 {
                    try? await Task.sleep(for: .milliseconds(200 * attempt))
                    continue
                }
                return DoctorFinding(ok: false, check: "matrix.appservice_ping", detail: pingFailure(error, note: note, config: config))
            }
        }
    }

    private static func pingFailure(_ error: MatrixError, note: String, config: Config) -> String {
        let url = config.appservice.url.absoluteString
        switch error.errcode {
        case .urlNotSet?:
            return "the homeserver's registration for '\(config.appservice.id)' has no url: set it to \(url)"
        case .badStatus?:
            return "the homeserver reached \(url) but was refused (\(error.message)): the registration's hs_token probably differs from appservice.hs_token"
        case .connectionFailed?, .connectionTimeout?:
            return "the homeserver could not reach \(note) at \(url) (\(error.errcode ?? "")): check that the registration url points at appservice.listen"
        case .forbidden?, .notFound?:
            return "the homeserver refused to ping appservice '\(config.appservice.id)' (\(error.errcode ?? "")): the registration's id must match appservice.id"
        default:
            return "the ping failed: \(error.description)"
        }
    }
}

/// The listener's handler during `doctor`: answers pings, refuses to take transactions (the homeserver keeps them
/// for the real bridge) but one that carries only the to-device probe, and owns no users or aliases.
private struct DoctorHandler: AppServiceHandler {
    struct NotServing: Error {}
    let probe: ToDeviceProbe?
    func handle(_ transaction: Transaction) async throws {
        guard let probe, probe.acknowledges(transaction) else { throw NotServing() }
    }
    func isProcessed(_ id: TransactionID) async throws -> Bool { false }
    func seenMessages(_ events: [EventID], in room: RoomID) async throws -> Set<EventID> { [] }
    func userExists(_ user: UserID) async -> Bool { false }
    func roomAliasExists(_ alias: RoomAlias) async -> Bool { false }
}
