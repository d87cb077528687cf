import Network

/// How the server is found when `server_host` is not configured: the SRV records of the account's domain, looked up
/// anew on every connection attempt (records change), each lookup given at most `timeout`.
public struct SRVLookup: Sendable {
    public var resolver: SRVResolver
    public var timeout: Duration

    public init(resolver: SRVResolver = SRVResolver(), timeout: Duration = .seconds(5)) {
        self.resolver = resolver
        self.timeout = timeout
    }

    /// The system's resolver (the nameservers of /etc/resolv.conf), 5 s per lookup.
    public static let system = SRVLookup()

    /// The candidates for one connection attempt: both services looked up at once (only `_xmpps-client` when
    /// `directTLSOnly`) and merged, `fallback` when they give nothing (``ServerCandidates/fromSRV(directTLS:startTLS:fallback:using:)``).
    /// Does I/O (DNS), on threads of the resolver's own.
    func candidates(domain: String, fallback: ServerEndpoint, directTLSOnly: Bool) async -> ServerCandidates {
        async let direct = records(of: .directTLS, in: domain)
        async let start = directTLSOnly ? nil : records(of: .startTLS, in: domain)
        var generator = SystemRandomNumberGenerator()
        return ServerCandidates.fromSRV(directTLS: await direct, startTLS: await start, fallback: fallback, using: &generator)
    }

    private func records(of service: ServerCandidates.Service, in domain: String) async -> Result<[SRVRecord], SRVLookupError> {
        do throws(SRVLookupError) {
            return .success(try await resolver.lookup(service.name(in: domain), timeout: timeout))
        } catch {
            return .failure(error)
        }
    }
}
