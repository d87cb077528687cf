import FoundationEssentials
import IsthmusCommon
import Synchronization
import Matrix

/// The appservice endpoint the homeserver pushes to (appservice API v1.17 §2.3): transactions, user and alias
/// queries, ping, plus an unauthenticated health probe. Owns an ``HTTPServer`` bound in `init`.
///
/// ``run()`` serves until the task is cancelled or ``shutdown()`` is called (the swift-service-lifecycle shape).
/// Inside it one task processes transactions strictly one at a time (``TransactionProcessor``); queries, pings and
/// probes are answered by concurrent child tasks, so a query caused by the core's own call during a transaction
/// (e.g. joining an alias) never deadlocks. Every refusal is Matrix JSON and the listener keeps serving.
///
/// Route and token are checked on the request head, before any body byte is read (``AppServiceAdmission``):
/// a stranger is answered 401/403/404/405 at once and disconnected, and cannot crowd out the homeserver's
/// connections (``ConnectionPolicy``).
public final class AppServiceListener: Sendable {
    /// Where to listen, which token the homeserver must present, and the limits that keep strangers from
    /// holding memory or connections (see ``HTTPServer`` and ``ConnectionPolicy``).
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port (see ``AppServiceListener/port``).
        public var port: Int
        /// The registration's `hs_token`.
        public var hsToken: String
        /// The provisioning API's bearer token; nil: its routes answer 404.
        public var provisioningSecret: String?
        /// Transaction bodies above this are refused with 413 (Synapse sends at most ~100 events of ≤ 64 KiB).
        /// Every other route takes at most 64 KiB.
        public var maxBodyBytes: Int
        /// Open connections kept at most (the homeserver needs a handful).
        public var connectionLimit: Int
        /// Idle connections without the token, kept at most per peer address. Keep it above the largest burst of
        /// new connections the homeserver opens at once: in a burst, heads not yet read count as idle.
        public var unauthenticatedConnectionsPerAddress: Int
        /// How long a connection without the token may stay idle or take to send its request head.
        public var unauthenticatedTimeout: Duration
        /// Idle timeout of the homeserver's keep-alive connections.
        public var idleTimeout: Duration
        /// Longest time from a request's head to the end of its body.
        public var requestTimeout: Duration
        /// Start as the standby of an active/standby pair: every route but the health probe answers 503 until
        /// ``AppServiceListener/becomeActive()``.
        public var standby = false

        public init(host: String, port: Int, hsToken: String, maxBodyBytes: Int = 16 << 20, connectionLimit: Int = 64,
                    unauthenticatedConnectionsPerAddress: Int = 32, unauthenticatedTimeout: Duration = .seconds(10),
                    idleTimeout: Duration = .seconds(90), requestTimeout: Duration = .seconds(60),
                    provisioningSecret: String? = nil) {
            self.host = host
            self.provisioningSecret = provisioningSecret
            self.port = port
            self.hsToken = hsToken
            self.maxBodyBytes = maxBodyBytes
            self.connectionLimit = connectionLimit
            self.unauthenticatedConnectionsPerAddress = unauthenticatedConnectionsPerAddress
            self.unauthenticatedTimeout = unauthenticatedTimeout
            self.idleTimeout = idleTimeout
            self.requestTimeout = requestTimeout
        }
    }

    /// The bound port.
    public var port: Int { server.port }
    private let server: HTTPServer
    private let gate: AppServiceGate
    private let processor: TransactionProcessor
    private let handler: any AppServiceHandler
    private let provisioner: (any ProvisioningHandler)?
    private let media: (any MediaRequestHandler)?
    private let logger: Logger
    private let standby: Atomic<Bool>

    /// Binds the listening socket (requests wait until ``run()``). Does I/O.
    /// - Throws: ``HTTPServerError`` when the address cannot be bound (e.g. already in use).
    /// `provisioner` serves the provisioning API (only when `configuration.provisioningSecret` is set).
    public init(configuration: Configuration, handler: any AppServiceHandler,
                provisioner: (any ProvisioningHandler)? = nil, media: (any MediaRequestHandler)? = nil,
                logger: Logger) throws(HTTPServerError) {
        let gate = AppServiceGate(hsToken: configuration.hsToken,
                                  provisioningSecret: provisioner == nil ? nil : configuration.provisioningSecret)
        let admission = AppServiceAdmission(gate: gate, maxTransactionBytes: configuration.maxBodyBytes)
        server = try HTTPServer(
            configuration: .init(
                host: configuration.host, port: configuration.port, maxBodyBytes: configuration.maxBodyBytes,
                connectionLimit: configuration.connectionLimit,
                unauthenticatedConnectionsPerAddress: configuration.unauthenticatedConnectionsPerAddress,
                unauthenticatedTimeout: configuration.unauthenticatedTimeout, idleTimeout: configuration.idleTimeout,
                requestTimeout: configuration.requestTimeout, admission: { admission.decide($0) },
                tooLargeResponse: .matrixError(AppServiceRejection(status: 413, errcode: MatrixErrorCode.tooLarge, message: "Request body too large"))),
            logger: logger)
        self.gate = gate
        processor = TransactionProcessor(handler: handler, logger: logger)
        self.handler = handler
        self.provisioner = provisioner
        self.media = media
        self.logger = logger
        standby = Atomic(configuration.standby)
    }

    /// The 503 a standby answers: Matrix JSON with `Retry-After`, so a homeserver reaching it directly backs off
    /// briefly and a load balancer sends the request to the active instance.
    static let standbyResponse: HTTPServerResponse = {
        var response = HTTPServerResponse.matrixError(AppServiceRejection(
            status: 503, errcode: MatrixErrorCode.unknown, message: "This bridge instance is the standby; the active instance serves"))
        response.headers["Retry-After"] = "1"
        return response
    }()

    /// The standby became the active instance: from now on every route is served. Any thread; idempotent.
    public func becomeActive() { standby.store(false, ordering: .sequentiallyConsistent) }

    /// Whether it still answers as the standby.
    public var isStandby: Bool { standby.load(ordering: .sequentiallyConsistent) }

    /// Serves requests until cancelled or shut down; returns once every started request was answered and the
    /// socket is closed. Meanwhile a child task closes expired unauthenticated connections once a second.
    public func run() async {
        logger.info("Appservice listener serving", metadata: ["matrix.appservice.port": String(port)])
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { [server] in
                    while (try? await Task.sleep(for: .seconds(1))) != nil { server.closeExpiredConnections() }
                }
                await serveRequests()
                group.cancelAll()
            }
        } onCancel: {
            server.stopAccepting()
        }
        server.close()
        logger.info("Appservice listener stopped")
    }

    /// Serves ``HTTPServer/requests`` until it ends: transactions one at a time in order, the rest concurrently.
    private func serveRequests() async {
        let (transactions, transactionQueue) = AsyncStream.makeStream(of: (TransactionID, HTTPServerRequest).self)
        await withDiscardingTaskGroup { group in
            group.addTask { [processor] in
                for await (id, request) in transactions {
                    request.respond(await processor.process(id, body: request.body))
                }
            }
            for await request in server.requests {
                switch gate.decide(Self.appServiceRequest(request)) {
                case .reject(let rejection):
                    // The server admitted the head through the same gate; reaching this is a bug.
                    logger.warning("Request refused after its head was admitted", metadata: [
                        "http.method": request.method, "http.status": String(rejection.status), "matrix.errcode": rejection.errcode.rawValue,
                    ])
                    request.respond(.matrixError(rejection))
                case .serve(let route) where route != .health && isStandby:
                    request.respond(Self.standbyResponse)
                case .serve(.transaction(let id)):
                    transactionQueue.yield((id, request))
                case .serve(let route):
                    group.addTask { [self] in request.respond(await serve(route, request)) }
                }
            }
            transactionQueue.finish()
        }
    }

    /// Stops taking requests; ``run()`` returns once those in progress are answered. Idempotent.
    public func shutdown() { server.stopAccepting() }

    private func serve(_ route: AppServiceRoute, _ request: HTTPServerRequest) async -> HTTPServerResponse {
        switch route {
        case .health:
            return .json(200, ["status": "ok"])
        case .ping:
            let body = try? JSONDecoder().decode(PingBody.self, from: request.body.isEmpty ? Data("{}".utf8) : request.body)
            logger.info("Homeserver ping received", metadata: ["matrix.ping.txn": body?.transactionID ?? ""])
            await handler.pinged(transactionID: body?.transactionID)
            return .json(200, EmptyObject())
        case .userQuery(let user):
            return await handler.userExists(user) ? .json(200, EmptyObject()) : .matrixError(Self.notFound)
        case .roomAliasQuery(let alias):
            return await handler.roomAliasExists(alias) ? .json(200, EmptyObject()) : .matrixError(Self.notFound)
        case .thirdPartyProtocol(let name):
            guard let description = await handler.thirdPartyProtocol(name) else { return .matrixError(Self.notFound) }
            return .json(200, description)
        case .thirdPartyLocation(let name):
            var fields: [String: String] = [:]
            for item in request.query where item.name != "access_token" {
                guard let key = PercentEncoding.decode(item.name),
                      let value = PercentEncoding.decode(item.value ?? "") else { continue }
                fields[key] = value
            }
            let locations = await handler.thirdPartyLocations(protocol: name, fields: fields)
            return locations.isEmpty ? .matrixError(Self.notFound) : .json(200, locations)
        case .thirdPartyUser:
            return .matrixError(Self.notFound)
        case .provisioning(let route):
            guard let provisioner else { return .matrixError(Self.notFound) }
            return await provisioner.provision(route, body: request.body)
        case .media(let id, let signature, let fileName):
            guard let media else { return .matrixError(Self.notFound) }
            return await media.serveMedia(id: id, signature: signature, fileName: fileName, method: request.method,
                                          headers: request.headers)
        case .transaction:
            return .matrixError(Self.notFound)  // routed to the transaction queue before reaching here
        }
    }

    private static func appServiceRequest(_ request: HTTPServerRequest) -> AppServiceRequest {
        AppServiceRequest(method: request.method, path: request.path, query: request.query,
                          authorization: request.headers["authorization"])
    }

    private static let notFound = AppServiceRejection(status: 404, errcode: MatrixErrorCode.notFound, message: "Not found")

    private struct PingBody: Decodable {
        var transactionID: String?
        enum CodingKeys: String, CodingKey { case transactionID = "transaction_id" }
    }
}
