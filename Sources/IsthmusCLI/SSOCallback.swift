import FoundationEssentials
import IsthmusCommon
import MatrixAppService

/// Where a browser sign-in ends for `isthmus login`: with `--sso` the homeserver sends the browser to ``redirectURL``
/// with `?loginToken=…` once the user has signed in (client-server API §"Client login via SSO"); with `--oauth` the
/// authorization server sends it there with `?code=…&state=…` (RFC 6749 §4.1.2, a loopback redirect as RFC 8252 §7.3
/// has it). The page shown says to go back to the terminal. A listener of its own on 127.0.0.1 (a free port), for this one request; others (a favicon)
/// get 404. libmicrohttpd runs it (``HTTPServer``); does network I/O.
final class SSOCallback: Sendable {
    private let server: HTTPServer
    /// The path the homeserver redirects to.
    static let path = "/isthmus-sso"

    /// Binds a free port on 127.0.0.1.
    init(logger: Logger) throws(HTTPServerError) {
        server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0, maxBodyBytes: 0, connectionLimit: 16), logger: logger)
    }

    /// The `redirectUrl` to give the homeserver.
    var redirectURL: String { "http://127.0.0.1:\(server.port)\(Self.path)" }

    /// The login token of the first redirect that brings one, or nil after `timeout`.
    func loginToken(timeout: Duration) async -> String? {
        await redirect(carrying: ["loginToken"], timeout: timeout)?["loginToken"]
    }

    /// The decoded query of the first redirect that carries one of `keys` (non-empty), or nil after `timeout`.
    func redirect(carrying keys: Set<String>, timeout: Duration) async -> [String: String]? {
        let server = server
        return await withTaskGroup(of: [String: String]?.self) { group in
            group.addTask {
                for await request in server.requests {
                    var query: [String: String] = [:]
                    for item in request.query {
                        if let value = item.value.flatMap({ PercentEncoding.decode($0.replacing("+", with: " ")) }) { query[item.name] = value }
                    }
                    guard request.path == Self.path, keys.contains(where: { query[$0]?.isEmpty == false }) else {
                        request.respond(HTTPServerResponse(status: 404, body: Data("Not found".utf8)))
                        continue
                    }
                    request.respond(HTTPServerResponse(status: 200, headers: ["Content-Type": "text/plain; charset=utf-8"],
                                                       body: Data("Signed in: isthmus login goes on in the terminal. You can close this page.\n".utf8)))
                    return query
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// Stops listening (answers what is left with 503).
    func close() {
        server.stopAccepting()
        server.close()
    }
}
