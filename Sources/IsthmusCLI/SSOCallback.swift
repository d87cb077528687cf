import FoundationEssentials
import IsthmusCommon
import MatrixAppService

/// Where single sign-on ends for `isthmus login --sso`: the homeserver sends the browser to ``redirectURL`` with
/// `?loginToken=…` once the user has signed in (client-server API §"Client login via SSO"), and the page shown says to go
/// back to the terminal. A listener of its own on 127.0.0.1 (a free port), for this one request; others (a favicon)
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
        let server = server
        return await withTaskGroup(of: String?.self) { group in
            group.addTask {
                for await request in server.requests {
                    guard request.path == Self.path, let token = request.query.first(where: { $0.name == "loginToken" })?.value
                        .flatMap({ PercentEncoding.decode($0) }), !token.isEmpty else {
                        request.respond(HTTPServerResponse(status: 404, body: Data("Not found".utf8)))
                        continue
                    }
                    request.respond(HTTPServerResponse(status: 200, headers: ["Content-Type": "text/plain; charset=utf-8"],
                                                       body: Data("Signed in: isthmus login goes on in the terminal. You can close this page.\n".utf8)))
                    return token
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
