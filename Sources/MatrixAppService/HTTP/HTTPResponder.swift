/// Answers a ``PendingRequest`` once; answers 503 if dropped unanswered. Thread-safe.
final class HTTPResponder: Sendable {
    private let core: ServerCore
    private let request: PendingRequest

    init(core: ServerCore, request: PendingRequest) {
        self.core = core
        self.request = request
    }

    /// Sends `response` unless the request was answered already. No blocking I/O (wakes libmicrohttpd's thread).
    func respond(_ response: HTTPServerResponse) { core.answer(request, with: response) }

    deinit { core.answer(request, with: .unavailable) }
}
