import Foundation
import Network
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A DNS nameserver on loopback UDP for the SRV lookup's tests: answers each query from a table, name by name —
/// SRV records as wire bytes built by ``DNSWire`` (targets compressed against the question), NXDOMAIN, SERVFAIL,
/// silence, or whatever broken bytes a test makes — and NXDOMAIN for names it does not know. Records the names asked.
/// A blocking socket on a thread of its own (a test helper: simple beats clever); stopped by ``close()`` or deinit.
public final class FakeDNSServer: @unchecked Sendable {
    /// What the server answers for a name.
    public enum Answer: Sendable {
        /// These SRV records (an empty list: the name exists but has none).
        case records([SRVRecord])
        /// NXDOMAIN: no such name.
        case nameError
        /// SERVFAIL.
        case serverFailure
        /// No reply at all: the resolver waits until it gives up.
        case silence
        /// The bytes this makes from the query: a hostile server's reply.
        case bytes(@Sendable (DNSQuery) -> [UInt8])
    }

    /// The UDP port it listens on, on 127.0.0.1.
    public let port: Int
    /// The socket and the table, shared with the serving thread (which does not keep this object alive: deinit stops it).
    private let core: Core

    /// Listens on a free loopback UDP port; `answers` by name, lowercased, without the trailing dot.
    public init(_ answers: [String: Answer]) throws(RawSocketError) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RawSocketError(operation: "socket", code: errno) }
        port = try RawSocket.bindToLoopback(fd)
        let core = Core(descriptor: fd, answers: answers)
        self.core = core
        Thread.detachNewThread { core.serve() }
    }

    deinit { close() }

    /// A resolver that asks only this server.
    public var resolver: SRVResolver { SRVResolver(nameserver: "127.0.0.1", port: port)! }

    /// The names asked so far, in order.
    public var asked: [String] { core.state.withLock { $0.asked } }

    /// Answers `answer` for `name` from now on.
    public func answer(_ name: String, with answer: Answer) {
        core.state.withLock { $0.answers[name] = answer }
    }

    /// Stops answering; the thread ends within its poll interval and closes the socket.
    public func close() {
        core.state.withLock { $0.closed = true }
    }
}

/// The serving thread's half of a ``FakeDNSServer``.
private final class Core: Sendable {
    struct State {
        var answers: [String: FakeDNSServer.Answer]
        var asked: [String] = []
        var closed = false
    }

    let descriptor: Int32
    let state: Mutex<State>

    init(descriptor: Int32, answers: [String: FakeDNSServer.Answer]) {
        self.descriptor = descriptor
        state = Mutex(State(answers: answers))
    }

    func serve() {
        defer { Glibc.close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !state.withLock({ $0.closed }) {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0 else { continue }
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let count = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(descriptor, &buffer, buffer.count, 0, $0, &length) }
            }
            guard count > 0, let query = DNSWire.query(Array(buffer.prefix(count))) else { continue }
            let answer = state.withLock { state -> FakeDNSServer.Answer in
                state.asked.append(query.name)
                return state.answers[query.name] ?? .nameError
            }
            let reply: [UInt8]
            switch answer {
            case .records(let records): reply = DNSWire.reply(to: query, answers: records.map { DNSWire.srv($0, for: query) })
            case .nameError: reply = DNSWire.reply(to: query, rcode: DNSWire.nameError)
            case .serverFailure: reply = DNSWire.reply(to: query, rcode: DNSWire.serverFailure)
            case .silence: continue
            case .bytes(let make): reply = make(query)
            }
            _ = withUnsafePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(descriptor, reply, reply.count, 0, $0, length) }
            }
        }
    }
}
