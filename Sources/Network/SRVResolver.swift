private import CResolv
#if canImport(Glibc)
import Glibc
#endif

/// Looks up SRV records through glibc's resolver, libresolv: `res_nquery` on a resolver state of its own per query
/// (`res_ninit` reads /etc/resolv.conf anew, so a changed nameserver counts at the next attempt), the answer parsed by
/// `ns_initparse`, `ns_parserr` and `dn_expand`, which check every count, length and compression pointer against the
/// message's end and refuse pointer loops. The only file that imports libresolv; no C type leaves it.
///
/// `query` blocks; ``lookup(_:timeout:)`` runs it on a thread of its own. A value: any task may use it.
///
/// In `Network` rather than a target of its own: `Network` already resolves host names (`getaddrinfo`) on threads of
/// its own, an SRV lookup is one more such call, and its one user (the client connection) already depends on it.
public struct SRVResolver: Sendable {
    /// At most this many SRV records of one answer are used, the rest ignored: a hostile answer cannot make the
    /// bridge try thousands of hosts.
    public static let maximumRecords = 32

    /// The IPv4 nameserver asked instead of /etc/resolv.conf's (the address in network order); nil: the system's.
    private let nameserver: (address: UInt32, port: UInt16)?

    /// The system's resolver: the nameservers of /etc/resolv.conf.
    public init() { nameserver = nil }

    /// Asks only the nameserver at `address` (IPv4, dotted) on `port`: a fake one on loopback in tests. nil when
    /// `address` is not an IPv4 address or `port` not a UDP port.
    public init?(nameserver address: String, port: Int) {
        var parsed = in_addr()
        guard inet_pton(AF_INET, address, &parsed) == 1, let port = UInt16(exactly: port), port > 0 else { return nil }
        nameserver = (parsed.s_addr, port)
    }

    /// One query for `name`'s SRV records. Blocks the calling thread for up to about `timeout`, or a little longer
    /// (glibc's own waits: two tries per nameserver, the first of half of it); ``lookup(_:timeout:)`` holds its caller
    /// to `timeout`. No records (NXDOMAIN, or no SRV data) is an empty list, not an error.
    func query(_ name: String, timeout: Duration) -> Result<[SRVRecord], SRVLookupError> {
        let seconds = Int32(clamping: (timeout.components.seconds + 1) / 2)
        guard let state = isthmus_res_open(max(1, seconds), 2) else {
            return .failure(.failed(name: name, reason: "cannot read the resolver's configuration (/etc/resolv.conf)"))
        }
        defer { isthmus_res_close(state) }
        if let nameserver {
            isthmus_res_use_nameserver(state, in_addr(s_addr: nameserver.address), nameserver.port.bigEndian)
        }
        var answer = [UInt8](repeating: 0, count: 65_535)
        let length = res_nquery(state, name, Int32(ns_c_in.rawValue), Int32(ns_t_srv.rawValue), &answer, Int32(answer.count))
        guard length >= 0 else {
            switch isthmus_res_h_errno(state) {
            case HOST_NOT_FOUND, NO_DATA: return .success([])
            case TRY_AGAIN: return .failure(.failed(name: name, reason: "no nameserver answered, or it failed (SERVFAIL)"))
            case NO_RECOVERY: return .failure(.failed(name: name, reason: "the nameserver refused the query or could not answer it"))
            default: return .failure(.failed(name: name, reason: String(cString: strerror(errno))))
            }
        }
        return answer.withUnsafeBufferPointer { Self.parse(UnsafeBufferPointer(rebasing: $0.prefix(Int(length))), name: name) }
    }

    /// The SRV records of the answer section of `message` (records of other types, e.g. a CNAME, skipped), at most
    /// ``maximumRecords``. Anything malformed fails the whole answer: a half-read message is not trusted.
    private static func parse(_ message: UnsafeBufferPointer<UInt8>, name: String) -> Result<[SRVRecord], SRVLookupError> {
        guard let base = message.baseAddress else { return .failure(.malformedAnswer(name: name, reason: "it is empty")) }
        var handle = ns_msg()
        guard ns_initparse(base, Int32(message.count), &handle) == 0 else {
            return .failure(.malformedAnswer(name: name, reason: "its sections do not fit its \(message.count) bytes"))
        }
        var records: [SRVRecord] = []
        for index in 0..<isthmus_ns_msg_count(&handle, ns_s_an) where records.count < maximumRecords {
            var record = ns_rr()
            guard ns_parserr(&handle, ns_s_an, index, &record) == 0 else {
                return .failure(.malformedAnswer(name: name, reason: "answer \(index) cannot be read"))
            }
            guard record.type == ns_t_srv.rawValue, record.rr_class == ns_c_in.rawValue else { continue }
            // RFC 2782: priority, weight, port (16 bits each), then the target, at least the root's one byte.
            guard record.rdlength >= 7, let data = record.rdata else {
                return .failure(.malformedAnswer(name: name, reason: "an SRV record of \(record.rdlength) bytes"))
            }
            var target = [CChar](repeating: 0, count: Int(NS_MAXDNAME) + 1)
            let used = dn_expand(base, base + message.count, data + 6, &target, Int32(target.count))
            guard used > 0 else {
                return .failure(.malformedAnswer(name: name, reason: "an SRV target is not a name (a pointer out of the message or in a loop)"))
            }
            guard used <= Int(record.rdlength) - 6 else {
                return .failure(.malformedAnswer(name: name, reason: "an SRV target runs past its record"))
            }
            let text = String(decoding: target.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            records.append(SRVRecord(priority: UInt16(data[0]) << 8 | UInt16(data[1]), weight: UInt16(data[2]) << 8 | UInt16(data[3]),
                                     port: UInt16(data[4]) << 8 | UInt16(data[5]), target: text.isEmpty ? "." : text))   // the root
        }
        return .success(records)
    }
}
