import IsthmusCommon
import Network

/// The TCP step of a connection attempt: where the server is, and the first of its endpoints that takes the connection.
extension ClientConnection {
    /// Finds the candidates (the SRV records of the account's domain, looked up anew on every attempt, when
    /// ``ClientConfiguration/srvLookup`` is set) and tries them in order until one takes the TCP connection, each within
    /// the connect timeout; a refused or silent one is followed by the next, and only when none is left does the attempt
    /// fail (then the reconnect backoff counts it). Keeps the way taken in ``route``. On the actor; DNS and TCP are
    /// done on threads of their own.
    func connectToServer() async throws(ClientError) -> (TCPConnection, ServerEndpoint) {
        let domain = configuration.stream.domain
        let fallback = ServerEndpoint(host: configuration.host, port: configuration.port, directTLS: configuration.directTLS)
        let candidates = if let lookup = configuration.srvLookup {
            await lookup.candidates(domain: domain, fallback: fallback, directTLSOnly: configuration.directTLS)
        } else {
            ServerCandidates.configured(fallback)
        }
        if case .fallback(let failures) = candidates.source, !failures.isEmpty, !Task.isCancelled {
            logger.info("No SRV records of the XMPP domain could be read; trying the domain itself", metadata: [
                "xmpp.domain": domain, "xmpp.srv.error": failures.map(\.description).joined(separator: "; ")])
        }
        var route = ServerRoute(domain: domain, candidates: candidates)
        defer { self.route = route }
        for endpoint in candidates.endpoints {
            guard !closeRequested, !Task.isCancelled else { break }
            do throws(NetworkError) {
                let socket = try await TCPConnection.connect(host: endpoint.host, port: endpoint.port, timeout: configuration.connectTimeout)
                route.connected = endpoint
                logger.info("Connected to the XMPP server's client port", metadata: [
                    "xmpp.server": "\(endpoint)", "xmpp.server.found": candidates.source.name,
                    "xmpp.server.direct_tls": "\(endpoint.directTLS)", "xmpp.server.skipped": String(route.failures.count)])
                return (socket, endpoint)
            } catch {
                route.failures.append(ServerRoute.Failure(endpoint: endpoint, error: error))
                logger.debug("An XMPP server endpoint did not take the connection", metadata: [
                    "xmpp.server": "\(endpoint)", "xmpp.error": error.description])
            }
        }
        throw .unreachable(route.unreachableReason)
    }
}

extension ServerCandidates.Source {
    /// For logs: `configured`, `srv`, `fallback` or `no-service`.
    var name: String {
        switch self {
        case .configured: "configured"
        case .srv: "srv"
        case .fallback: "fallback"
        case .noService: "no-service"
        }
    }
}
