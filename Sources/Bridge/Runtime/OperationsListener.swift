import FoundationEssentials
import IsthmusCommon
import IsthmusMetrics
import IsthmusStore
import MatrixAppService

/// The operations endpoint on `metrics.listen`, apart from the appservice listener: `GET /metrics` (Prometheus text
/// format 0.0.4), `GET /health` (200 while the process serves it) and `GET /ready` (200 while the XMPP component is
/// connected and the homeserver answered within the last minute, else 503 with the reasons as JSON; the standby of an
/// active/standby pair answers 503 with the status `standby`).
///
/// No authentication: bind it to loopback or a private network (see docs/deploy.md). Any other path is 404, any
/// other method 405, answered on the request head. Owns an ``HTTPServer``; ``run()`` serves until cancelled or
/// ``shutdown()`` (the swift-service-lifecycle shape), each request in its own child task.
public final class OperationsListener: Sendable {
    /// The paths it serves.
    enum Route: String {
        case metrics = "/metrics"
        case health = "/health"
        case ready = "/ready"
    }

    /// The body of `/health` and `/ready`.
    struct Status: Encodable {
        var status: String
        var reasons: [String]?
    }

    /// The bound port.
    public var port: Int { server.port }
    private let server: HTTPServer
    private let metrics: BridgeMetrics
    private let store: Store
    private let logger: Logger

    /// Binds `host:port` (0: a free port). Does I/O.
    /// - Throws: ``HTTPServerError`` when the address cannot be bound.
    public init(host: String, port: Int, metrics: BridgeMetrics, store: Store, logger: Logger) throws(HTTPServerError) {
        server = try HTTPServer(
            configuration: .init(host: host, port: port, maxBodyBytes: 0, connectionLimit: 64, unauthenticatedTimeout: .seconds(30),
                                 idleTimeout: .seconds(120), requestTimeout: .seconds(10), admission: { Self.admit($0) }),
            logger: logger)
        self.metrics = metrics
        self.store = store
        self.logger = logger
    }

    /// The decision on a request head: known path and GET (or HEAD), else 404/405 without reading anything more.
    static func admit(_ head: HTTPRequestHead) -> HTTPAdmission {
        guard Route(rawValue: head.path) != nil else {
            return .refuse(HTTPServerResponse(status: 404, headers: ["Content-Type": "text/plain"], body: Data("Not found\n".utf8)),
                           reason: "unknown_path")
        }
        guard head.method == "GET" || head.method == "HEAD" else {
            return .refuse(HTTPServerResponse(status: 405, headers: ["Content-Type": "text/plain", "Allow": "GET, HEAD"],
                                              body: Data("Method not allowed\n".utf8)), reason: "wrong_method")
        }
        return .admit(maxBodyBytes: 0, authenticated: true)
    }

    /// Serves until cancelled or shut down; returns once the socket is closed.
    public func run() async {
        logger.info("Operations listener serving", metadata: ["metrics.port": String(port)])
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { [server] in
                    while (try? await Task.sleep(for: .seconds(1))) != nil { server.closeExpiredConnections() }
                }
                for await request in server.requests {
                    group.addTask { [self] in request.respond(await answer(request.path)) }
                }
                group.cancelAll()
            }
        } onCancel: {
            server.stopAccepting()
        }
        server.close()
        logger.info("Operations listener stopped")
    }

    /// Stops taking requests; ``run()`` returns once those in progress are answered. Idempotent.
    public func shutdown() { server.stopAccepting() }

    /// The answer for an admitted path. `/metrics` reads the store's counts first (store I/O).
    func answer(_ path: String) async -> HTTPServerResponse {
        switch Route(rawValue: path) {
        case .metrics?:
            await metrics.refresh(from: store)
            return HTTPServerResponse(status: 200, headers: ["Content-Type": PrometheusExposition.contentType],
                                      body: Data(metrics.exposition().utf8))
        case .health?:
            return .json(200, Status(status: "ok"))
        case .ready?:
            let verdict = metrics.health.verdict()
            guard !verdict.ready else { return .json(200, Status(status: "ready")) }
            return .json(503, Status(status: metrics.health.isStandby ? "standby" : "not_ready", reasons: verdict.reasons))
        case nil:
            return HTTPServerResponse(status: 404)
        }
    }
}
