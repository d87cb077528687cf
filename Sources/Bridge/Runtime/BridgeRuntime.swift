import FoundationEssentials
import IsthmusCommon
import IsthmusConfig
import IsthmusStore
import Matrix
import MatrixAppService
import MatrixClient
import MatrixCrypto
import Media
import XMPP
import XMPPComponent

/// `isthmus serve`: wires the store, the XMPP side (component or account), the Matrix side (the appservice listener, or
/// the account's sync) and the bridge core, runs them until asked to stop, then shuts down in reverse order
/// (listener, portals, XMPP stream).
public struct BridgeRuntime: Sendable {
    /// Why the runtime could not start.
    public struct StartError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    let config: Config
    let logger: Logger
    /// How long a shutdown may wait for in-flight work before the process exits anyway (status 1, see ``RunningServices``).
    let shutdownDeadline: Duration = .seconds(10)

    public init(config: Config, logger: Logger) {
        self.config = config
        self.logger = logger
    }

    /// Runs the bridge until `stop` yields (or finishes). Throws only when it cannot start.
    public func run(until stop: AsyncStream<Void>) async throws {
        MemoryTrim.keepFreedMemory()   // before the first batch: see its comment
        let store = try Store(location: config.database.location, synchronous: StoreSynchronous(config.database.synchronous),
                              logger: logger.with(label: "store"))
        guard let naming = makeNaming() else {
            throw StartError(description: "the config's names do not form valid Matrix user ids or JIDs")
        }
        let metrics = BridgeMetrics()
        metrics.observe(store: store.activity)
        metrics.health.setStandby(config.ha.enabled)
        if let client = config.xmpp.client, config.xmpp.mode == .client { metrics.health.setClientMode(account: client.jid.description) }
        let matrix = try await makeMatrixSide(store: store, metrics: metrics)
        let (component, xmpp) = try await makeXMPP(naming: naming, store: store)
        let links = LinkService(store: store, client: matrix.client, bot: matrix.botUserID,
                                allowedMUCDomains: config.provisioning.allowedMUCDomains,
                                encryptedRooms: matrix.ghostDevices != nil ? EncryptedRoomPolicy(config.encryption) : .refused)
        let selfService = SelfServiceSettings(enabled: config.provisioning.selfService,
                                              consentTimeout: config.provisioning.consentTimeout,
                                              inviteTimeout: config.provisioning.inviteTimeout, links: links, client: matrix.client)
        let bridge = Bridge(store: store, xmpp: xmpp, matrix: matrix.bridgeLink, naming: naming, logger: logger, metrics: metrics,
                            selfService: selfService,
                            roleLevels: RoleLevels(owner: config.powerLevels.owner, admin: config.powerLevels.admin,
                                                   moderator: config.powerLevels.moderator),
                            media: matrix.media,
                            relay: config.xmpp.mode == .client
                                ? RelayFormat(message: config.relay.xmppFormat, emote: config.relay.xmppEmoteFormat) : nil,
                            subscriptions: config.xmpp.client?.acceptSubscriptions ?? .none,
                            matrixRelay: matrix.relay, matrixSync: matrix.sync,
                            gateway: gatewayWiring(naming: naming, client: matrix.client),
                            encryption: matrix.ghostDevices.map { Bridge.EncryptionWiring(devices: $0, policy: EncryptedRoomPolicy(config.encryption)) })
        do {
            try await bridge.checkEncryptionKeys()
        } catch {
            throw StartError(description: "\(error)")
        }
        let listener = try matrix.isAppService ? makeListener(bridge: bridge, links: links, media: matrix.media) : nil
        var operations: OperationsListener?
        if let listen = config.metrics.listen {
            do {
                operations = try OperationsListener(host: listen.host, port: listen.port, metrics: metrics, store: store,
                                                    logger: logger.with(label: "operations"))
            } catch {
                throw StartError(description: "cannot listen on metrics.listen \(listen): \(error)")
            }
        }
        let xmppServerDescription = switch config.xmpp.client {
        case let client? where config.xmpp.mode == .client:
            client.looksUpSRV ? "SRV of \(client.jid.domain), else \(client.host):\(client.port)" : "\(client.host):\(client.port)"
        default: "\(config.xmpp.serverHost):\(config.xmpp.serverPort)"
        }
        logger.info("Isthmus starting", metadata: [
            "version": IsthmusVersion.string, "matrix.homeserver": config.matrix.homeserverURL.absoluteString,
            "matrix.mode": config.matrix.mode.rawValue, "xmpp.mode": config.xmpp.mode.rawValue, "xmpp.server": xmppServerDescription,
            "store.location": "\(config.database.location)",
        ])
        if let signer = matrix.media.signer { logger.info("Media links served", metadata: ["media.public_base": signer.publicBase]) }
        for warning in config.warnings { logger.warning("Config warning", metadata: ["config.warning": warning.description]) }
        let parts = Parts(store: store, client: matrix.client, component: component, xmpp: xmpp, bridge: bridge, matrix: matrix.link,
                          metrics: metrics, listener: listener, operations: operations)
        if config.ha.enabled {
            try await runInPair(parts, until: stop)
        } else {
            await runAlone(parts, until: stop)
        }
    }

    /// The gateway's parts that the config turns on (`gateway.matrix_aliases`, `gateway.xmpp_rooms`; both need the
    /// application service, and the second the component too: the config check refuses them otherwise).
    private func gatewayWiring(naming: BridgeNaming, client: MatrixClient) -> Bridge.GatewayWiring? {
        guard config.matrix.mode == .appservice, config.gateway.matrixAliases || config.gateway.xmppRooms,
              let namespace = GhostNamespace(prefix: config.appservice.ghostPrefix, serverName: config.matrix.serverName,
                                             botLocalpart: config.appservice.botLocalpart) else { return nil }
        return Bridge.GatewayWiring(
            portals: config.gateway.matrixAliases
                ? DynamicPortals.Settings(gateway: config.gateway, namespace: namespace, asker: naming.botOccupant) : nil,
            rooms: config.gateway.xmppRooms && config.xmpp.mode == .component
                ? GatewayRooms.Settings(gateway: config.gateway, namespace: namespace, naming: naming) : nil,
            client: client)
    }

    /// The application service's listener: transactions and queries from the homeserver, provisioning, media.
    private func makeListener(bridge: Bridge, links: LinkService, media: MediaSettings) throws -> AppServiceListener {
        guard let namespace = GhostNamespace(prefix: config.appservice.ghostPrefix, serverName: config.matrix.serverName,
                                             botLocalpart: config.appservice.botLocalpart) else {
            throw StartError(description: "the config's names do not form valid Matrix user ids")
        }
        let handler = BridgeAppServiceHandler(bridge: bridge, namespace: namespace, logger: logger.with(label: "matrix.appservice"))
        let provisioner = config.provisioning.sharedSecret == nil
            ? nil : ProvisioningAPI(service: links, logger: self.logger.with(label: "provisioning"))
        do {
            var configuration = AppServiceListener.Configuration(
                host: config.appservice.listen.host, port: config.appservice.listen.port,
                hsToken: config.appservice.hsToken, provisioningSecret: config.provisioning.sharedSecret)
            configuration.standby = config.ha.enabled
            return try AppServiceListener(
                configuration: configuration, handler: handler, provisioner: provisioner,
                media: MediaProxy(settings: media, logger: logger.with(label: "media")), logger: logger.with(label: "matrix.appservice"))
        } catch {
            throw StartError(description: "cannot listen on \(config.appservice.listen): \(error)")
        }
    }

    /// What `run` built, handed to the way it runs (alone, or as one of an active/standby pair).
    struct Parts: Sendable {
        let store: Store
        let client: MatrixClient
        /// The component's or the account's connection.
        let component: XMPPSessionConnection
        let xmpp: SessionXMPPLink
        let bridge: Bridge
        let matrix: AppServiceMatrixLink
        let metrics: BridgeMetrics
        /// The application service's listener; nil in Matrix client mode (the bridge syncs instead).
        let listener: AppServiceListener?
        let operations: OperationsListener?

        /// Stops both listeners accepting (idempotent).
        func stopListening() {
            listener?.shutdown()
            operations?.shutdown()
        }
    }

    /// One process, no lease (`ha.enabled: false`): everything runs until `stop`, then shuts down in reverse order.
    func runAlone(_ parts: Parts, until stop: AsyncStream<Void>) async {
        let logger = self.logger
        let running = RunningServices()
        await withTaskGroup(of: Void.self) { group in
            addListeningServices(&group, running, parts)
            addActingServices(&group, running, parts)
            for await _ in stop { break }
            logger.info("Isthmus stopping")
            // Everything durable is already in the store; in-flight calls get a bounded time to finish.
            running.exitIfStillRunning(after: shutdownDeadline, logger: logger)
            parts.stopListening()
            parts.bridge.shutdown()
            await parts.component.close()
            group.cancelAll()
        }
        // Last: no store call may follow (the shutdown watchdog still covers it).
        await parts.store.close()
        running.markStopped()
        logger.info("Isthmus stopped")
    }

    /// What every process runs, active or standby: the two listeners and memory trimming.
    func addListeningServices(_ group: inout TaskGroup<Void>, _ running: RunningServices, _ parts: Parts) {
        if let listener = parts.listener {
            running.add(&group, "appservice listener") { await listener.run() }
        }
        if let operations = parts.operations {
            running.add(&group, "operations listener") { await operations.run() }
        }
        running.add(&group, "memory trimming") { await Self.trimMemory(every: .seconds(5)) }
    }

    /// What only the active process runs: the component, the portals, the homeserver ping and checks, pruning.
    /// They return once ``Bridge/shutdown()`` and ``ComponentConnection/close()`` were called and the group cancelled.
    func addActingServices(_ group: inout TaskGroup<Void>, _ running: RunningServices, _ parts: Parts) {
        let appserviceID = config.appservice.id
        let logger = self.logger
        running.add(&group, "xmpp connection") { await parts.component.run() }
        running.add(&group, "bridge") { await parts.bridge.run(xmppArrivals: parts.xmpp.events) }
        if parts.listener != nil {
            running.add(&group, "homeserver ping") {
                await Self.pingHomeserver(parts.client, appserviceID: appserviceID, metrics: parts.metrics, logger: logger)
            }
        }
        if parts.operations != nil {
            running.add(&group, "homeserver check") {
                await Self.checkHomeserver(parts.matrix, health: parts.metrics.health, every: .seconds(15))
            }
        }
        running.add(&group, "transaction pruning") { await Self.pruneTransactionIDs(parts.store, logger: logger) }
    }

    /// Keeps readiness honest on an idle bridge: every `interval`, unless some call got an answer within it, asks the
    /// homeserver `GET /_matrix/client/versions` (cheap, unauthenticated). Runs until cancelled.
    static func checkHomeserver(_ matrix: AppServiceMatrixLink, health: BridgeHealth, every interval: Duration) async {
        while !Task.isCancelled {
            if health.lastHomeserverAnswer.map({ ContinuousClock.now - $0 >= interval }) ?? true {
                _ = await matrix.checkHomeserver()
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Forgets processed homeserver transaction ids after a week (the homeserver stops retrying long before), hourly.
    static func pruneTransactionIDs(_ store: Store, logger: Logger) async {
        while !Task.isCancelled {
            do {
                try await store.pruneProcessedTransactions(olderThan: 7 * 86_400)
            } catch {
                logger.warning("Could not prune processed transaction ids", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(3600))
        }
    }

    /// Returns freed heap memory to the system every `interval` until cancelled, so the resident size follows what
    /// is in use rather than the peak (start-up with many rooms, bursts of traffic).
    static func trimMemory(every interval: Duration) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            MemoryTrim.releaseFreeMemory()
        }
    }

    /// Appservice ping (Matrix client API §10.3.5): proves the homeserver reaches us and makes Synapse retry at once
    /// what it queued while we were down. Retried with backoff until it works or the task is cancelled.
    static func pingHomeserver(_ client: MatrixClient, appserviceID: String, metrics: BridgeMetrics, logger: Logger) async {
        let backoff = Backoff(first: .milliseconds(500))
        var attempt = 0
        while !Task.isCancelled {
            let start = ContinuousClock.now
            do {
                let roundTrip = try await client.ping(appServiceID: appserviceID)
                metrics.homeserverRequest(.ping, succeeded: true, duration: .now - start)
                logger.info("Homeserver reaches the bridge", metadata: ["matrix.ping.duration": "\(roundTrip)"])
                return
            } catch {
                metrics.homeserverRequest(.ping, succeeded: false, duration: .now - start)
                logger.warning("Homeserver ping failed; retrying", metadata: ["error": error.description])
            }
            try? await Task.sleep(for: backoff.pause(after: attempt))
            attempt += 1
        }
    }
}
