import Network

/// The endpoints one connection attempt tries, in this order, and how they were found (RFC 6120 §3.2, XEP-0368).
/// Made from the configuration, or from the SRV records of the account's domain and a random number generator: a
/// pure value, tested without DNS.
public struct ServerCandidates: Sendable, Equatable {
    /// How the endpoints were found.
    public enum Source: Sendable, Equatable {
        /// `server_host` is configured (or `tls: none`, which needs a loopback one): that host only, no lookup.
        case configured
        /// The SRV records of the domain.
        case srv
        /// The domain has no SRV records, or no lookup gave an answer (then `failures` say why): the domain itself
        /// (RFC 6120 §3.2.2).
        case fallback(failures: [SRVLookupError])
        /// The domain's SRV records say it offers no client service (a lone target `.`) and no other gives one: no
        /// endpoint, and no falling back to the domain itself (RFC 2782; XEP-0368 §5). `failures`: the other lookup's.
        case noService(failures: [SRVLookupError])
    }

    /// The SRV services of client connections: `_xmpps-client` for direct TLS (XEP-0368), `_xmpp-client` for STARTTLS
    /// (RFC 6120 §3.2.1).
    public enum Service: String, Sendable, CaseIterable {
        case directTLS = "_xmpps-client._tcp"
        case startTLS = "_xmpp-client._tcp"

        /// The name looked up for `domain`.
        public func name(in domain: String) -> String { "\(rawValue).\(domain)" }
    }

    public var source: Source
    /// In the order to try; empty only with ``Source/noService(failures:)``.
    public var endpoints: [ServerEndpoint]

    public init(source: Source, endpoints: [ServerEndpoint]) {
        self.source = source
        self.endpoints = endpoints
    }

    /// The configured server: no lookup.
    public static func configured(_ endpoint: ServerEndpoint) -> ServerCandidates {
        ServerCandidates(source: .configured, endpoints: [endpoint])
    }

    /// The candidates from the two services' lookups: `_xmpps-client` records give direct-TLS endpoints and
    /// `_xmpp-client` ones STARTTLS endpoints, both in one RFC 2782 order (XEP-0368 §3, rule 1). `startTLS` nil: not
    /// looked up (`tls: direct` uses direct TLS only). A set that is one record with target `.` offers nothing; a `.`
    /// among other records, and port 0, are skipped. With no endpoint from either set, `fallback` (the domain itself)
    /// is the one candidate, unless a set said `.`: then there is none.
    public static func fromSRV(
        directTLS: Result<[SRVRecord], SRVLookupError>, startTLS: Result<[SRVRecord], SRVLookupError>?,
        fallback: ServerEndpoint, using generator: inout some RandomNumberGenerator
    ) -> ServerCandidates {
        var usable: [(record: SRVRecord, directTLS: Bool)] = []
        var failures: [SRVLookupError] = []
        var notOffered = false
        for (lookup, direct) in [(directTLS, true)] + (startTLS.map { [($0, false)] } ?? []) {
            switch lookup {
            case .failure(let error):
                failures.append(error)
            case .success(let records) where records.count == 1 && records[0].targetIsRoot:
                notOffered = true
            case .success(let records):
                usable += records.filter { !$0.targetIsRoot && $0.port != 0 }.map { ($0, direct) }
            }
        }
        if !usable.isEmpty { return ServerCandidates(source: .srv, endpoints: ordered(usable, using: &generator)) }
        if notOffered { return ServerCandidates(source: .noService(failures: failures), endpoints: []) }
        return ServerCandidates(source: .fallback(failures: failures), endpoints: [fallback])
    }
}
