import IsthmusCommon

extension ClientDoctor {
    /// How the server was found (a finding only when the SRV records of the account's domain were looked up) and
    /// whether an endpoint took the TCP connection, naming the ones that did not. Pure.
    static func routeFindings(_ route: ServerRoute?) -> [DoctorFinding] {
        guard let route else { return [DoctorFinding(ok: false, check: Check.reachable, detail: "no connection was attempted")] }
        let domain = route.domain, endpoints = route.candidates.endpoints
        var findings: [DoctorFinding] = []
        switch route.candidates.source {
        case .configured:
            break
        case .srv:
            findings.append(DoctorFinding(ok: true, check: Check.lookup, detail: "the SRV records of \(domain) name "
                                          + endpoints.map(describe).joined(separator: ", ")))
        case .fallback(let failures) where failures.isEmpty:
            findings.append(DoctorFinding(ok: true, check: Check.lookup, detail: "\(domain) has no SRV records for XMPP clients: "
                                          + "the domain itself, \(endpoints.map(describe).joined())"))
        case .fallback(let failures):
            findings.append(DoctorFinding(ok: true, check: Check.lookup, detail: "the SRV lookup failed ("
                                          + failures.map(\.description).joined(separator: "; ")
                                          + "): the domain itself, \(endpoints.map(describe).joined())", warning: true))
        case .noService(let failures):
            return [DoctorFinding(ok: false, check: Check.lookup, detail: "the SRV records of \(domain) say it offers no XMPP "
                                  + "client service (target '.')" + failures.map { "; \($0)" }.joined()
                                  + " — xmpp.client.server_host names a server to use instead")]
        }
        let skipped = route.failures.isEmpty ? "" : " (before it: \(route.failures.map(\.description).joined(separator: "; ")))"
        if let connected = route.connected {
            findings.append(DoctorFinding(ok: true, check: Check.reachable, detail: "\(describe(connected)) accepts connections" + skipped))
        } else {
            findings.append(DoctorFinding(ok: false, check: Check.reachable,
                                          detail: "cannot connect: \(route.failures.map(\.description).joined(separator: "; "))"))
        }
        return findings
    }

    /// `host:port`, with `(direct TLS)` for an XEP-0368 endpoint.
    private static func describe(_ endpoint: ServerEndpoint) -> String {
        endpoint.directTLS ? "\(endpoint) (direct TLS)" : "\(endpoint)"
    }
}
