import FoundationEssentials
import Synchronization

/// Plain HTTP requests for tests (a transaction replayed to the listener, a scrape of a metrics page): one
/// ``RawHTTPClient`` connection per request.
public enum RawHTTP {
    /// An answer: status and body.
    public struct Response: Sendable {
        public var status: Int
        public var body: Data
        public var text: String { String(decoding: body, as: UTF8.self) }

        /// The `errcode` of a Matrix error body.
        public var errcode: String? {
            struct Body: Decodable { var errcode: String }
            return (try? JSONDecoder().decode(Body.self, from: body))?.errcode
        }
    }

    /// At most this many requests at once, as a browser or an HTTP library keeps per host (a server may close the
    /// newest of many idle connections from one address).
    static let limit = ConcurrencyLimit(16)

    /// No answer in time.
    public struct TimedOut: Error, CustomStringConvertible {
        public var description: String
    }

    /// Sends one request to `http://127.0.0.1:<port><pathAndQuery>` and reads the answer, within `timeout` seconds.
    public static func request(_ method: String, port: Int, _ pathAndQuery: String, bearer: String? = nil, body: Data? = nil,
                               timeout: Double = 10) async throws -> Response {
        var fields: [(String, String)] = [("Connection", "close")]
        if let bearer { fields.append(("Authorization", "Bearer \(bearer)")) }
        if body != nil { fields.append(("Content-Type", "application/json")) }
        let headers = fields
        let bytes = body.map { Array($0) } ?? []
        await limit.acquire()
        defer { limit.release() }
        return try await withThrowingTaskGroup(of: Response.self) { group in
            group.addTask {
                let client = try await RawHTTPClient(port: port)
                let answer = try await client.request(method, pathAndQuery, headers: headers, body: bytes, expectContinue: true)
                return Response(status: answer.status, body: Data(answer.body))
            }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                throw TimedOut(description: "\(method) \(pathAndQuery) on port \(port): no answer within \(timeout) s")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
}

/// A counting semaphore for async code: at most `limit` holders at once, the rest wait in order.
final class ConcurrencyLimit: Sendable {
    private struct State {
        var available: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state: Mutex<State>

    init(_ limit: Int) { state = Mutex(State(available: limit)) }

    func acquire() async {
        await withCheckedContinuation { continuation in
            let granted = state.withLock { state -> Bool in
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
