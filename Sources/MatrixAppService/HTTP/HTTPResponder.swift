/// Answers a ``PendingRequest`` once; answers 503 if dropped unanswered. Thread-safe.
///
/// Holds the core weakly: a request handed to ``HTTPServer/requests`` and never taken out sits in the stream's buffer,
/// which the core reaches through its continuation, so a strong reference would make a cycle that outlives the server
/// (LeakSanitizer found it). Once the core is gone the server has closed, and closing answered every waiting request.
final class HTTPResponder: Sendable {
    private weak let core: ServerCore?
    private let request: PendingRequest

    init(core: ServerCore, request: PendingRequest) {
        self.core = core
        self.request = request
    }

    /// Sends `response` unless the request was answered already. No blocking I/O (wakes libmicrohttpd's thread).
    func respond(_ response: HTTPServerResponse) { core?.answer(request, with: response) }

    deinit { core?.answer(request, with: .unavailable) }
}
