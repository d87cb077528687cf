/// Serves the media route (`GET`/`HEAD /media/{id}/{signature}/{filename}`) of the appservice listener: the bridge's
/// side, which checks the signature and streams the file from the homeserver. The seam keeps the listener free of
/// media logic (production: the bridge's media proxy; tests: a fake).
public protocol MediaRequestHandler: Sendable {
    /// The answer to one media request: 404 for a wrong signature or unknown media, else the file (streamed).
    /// `headers` are the request's, by lower-case name (`range`, `if-none-match`). May do network I/O.
    func serveMedia(id: String, signature: String, fileName: String, method: String, headers: [String: String]) async -> HTTPServerResponse
}
