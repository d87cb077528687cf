import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix

/// The appservice endpoint the homeserver pushes to (appservice API v1.17 §2.3): transactions, user and alias
/// queries, ping, plus an unauthenticated health probe. Owns an ``HTTPServer`` bound in `init`.
///
/// ``run()`` serves until the task is cancelled or ``shutdown()`` is called (the swift-service-lifecycle shape).
/// Inside it one task processes transactions strictly one at a time (``TransactionProcessor``); queries, pings and
/// probes are answered by concurrent child tasks, so a query caused by the core's own call during a transaction
/// (e.g. joining an alias) never deadlocks. Every refusal is Matrix JSON and the listener keeps serving.
public final class AppServiceListener: Sendable {
    /// Where to listen and which token the homeserver must present.
    public struct Configuration: Sendable {
        public var host: String
        /// 0 picks a free port (see ``AppServiceListener/port``).
        public var port: Int
        /// The registration's `hs_token`.
        public var hsToken: String
        /// Bodies above this are refused with 413 (Synapse sends at most ~100 events of ≤ 64 KiB).
        public var maxBodyBytes: Int

        public init(host: String, port: Int, hsToken: String, maxBodyBytes: Int = 16 << 20) {
            self.host = host
            self.port = port
            self.hsToken = hsToken
            self.maxBodyBytes = maxBodyBytes
        }
    }

    /// The bound port.
    public var port: Int { server.port }
    private let server: HTTPServer
    private let gate: AppServiceGate
    private let processor: TransactionProcessor
    private let handler: any AppServiceHandler
    private let logger: Logger

    /// Binds the listening socket (requests wait until ``run()``). Does I/O.
    /// - Throws: ``HTTPServerError`` when the address cannot be bound (e.g. already in use).
    public init(configuration: Configuration, store: Store, handler: any AppServiceHandler, logger: Logger) throws(HTTPServerError) {
        server = try HTTPServer(
            configuration: .init(host: configuration.host, port: configuration.port, maxBodyBytes: configuration.maxBodyBytes),
            logger: logger)
        gate = AppServiceGate(hsToken: configuration.hsToken)
        processor = TransactionProcessor(store: store, handler: handler, logger: logger)
        self.handler = handler
        self.logger = logger
    }

    /// Serves requests until cancelled or shut down; returns once every started request was answered and the
    /// socket is closed.
    public func run() async {
        logger.info("Appservice listener serving", metadata: ["matrix.appservice.port": String(port)])
        let (transactions, transactionQueue) = AsyncStream.makeStream(of: (TransactionID, HTTPServerRequest).self)
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { [processor] in
                    for await (id, request) in transactions {
                        request.respond(await processor.process(id, body: request.body))
                    }
                }
                for await request in server.requests {
                    switch gate.decide(Self.appServiceRequest(request)) {
                    case .reject(let rejection):
                        logger.notice("Request refused", metadata: [
                            "http.method": request.method, "http.status": String(rejection.status), "matrix.errcode": rejection.errcode,
                        ])
                        request.respond(.matrixError(rejection))
                    case .serve(.transaction(let id)):
                        transactionQueue.yield((id, request))
                    case .serve(let route):
                        group.addTask { [self] in request.respond(await serve(route, request)) }
                    }
                }
                transactionQueue.finish()
            }
        } onCancel: {
            server.stopAccepting()
        }
        server.close()
        logger.info("Appservice listener stopped")
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
        case .transaction:
            return .matrixError(Self.notFound)  // routed to the transaction queue before reaching here
        }
    }

    private static func appServiceRequest(_ request: HTTPServerRequest) -> AppServiceRequest {
        AppServiceRequest(method: request.method, path: request.path, query: request.query,
                          authorization: request.headers["authorization"], bodyTooLarge: request.bodyTooLarge)
    }

    private static let notFound = AppServiceRejection(status: 404, errcode: MatrixErrorCode.notFound, message: "Not found")

    private struct PingBody: Decodable {
        var transactionID: String?
        enum CodingKeys: String, CodingKey { case transactionID = "transaction_id" }
    }
}
