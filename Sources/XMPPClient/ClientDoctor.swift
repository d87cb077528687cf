import IsthmusCommon
import XMPP

/// The XMPP half of `isthmus doctor` in client mode: logs in once as the configured account and says plainly what
/// works and what does not — how the server was found (its SRV records, or the domain itself) and which endpoint took
/// the connection, TLS and its certificate, the login (and what SASL2 did with it), XEP-0198 (what keeps the relay
/// occupant in its rooms across a dropped connection), pings. Does I/O; no retries (the first failure ends it).
public enum ClientDoctor {
    /// Check names, as printed.
    public enum Check {
        /// Only when the server is looked up in the SRV records of the account's domain.
        public static let lookup = "XMPP server lookup"
        public static let reachable = "XMPP server reachable"
        public static let tls = "XMPP TLS"
        public static let login = "XMPP login"
        public static let streamManagement = "XMPP stream management"
        public static let ping = "XMPP server answers pings"
    }

    /// Connects to the configured server as the account, reports each step reached, then closes the stream.
    public static func check(configuration: ClientConfiguration, logger: Logger) async -> [DoctorFinding] {
        var configuration = configuration
        configuration.reconnectInitialDelay = .seconds(3600)   // one attempt: the first failure is the verdict
        let connection = ClientConnection(configuration: configuration, logger: logger)
        let account = "\(configuration.stream.username)@\(configuration.stream.domain)"
        let domain = JID(localpart: nil, domain: configuration.stream.domain)
        return await DoctorFinding.verdict(running: { await connection.run() }) {
            for await event in connection.events {
                switch event {
                case .connected:
                    let findings = routeFindings(await connection.route)
                        + (await connectedFindings(connection, account: account, domain: domain))
                    await connection.close()
                    return findings
                case .disconnected(let error):
                    return routeFindings(await connection.route) + findings(for: error, account: account)
                default:
                    continue
                }
            }
            return [DoctorFinding(ok: false, check: Check.login, detail: "the connection stopped without an answer")]
        }
    }

    private static func connectedFindings(_ connection: ClientConnection, account: String, domain: JID?) async -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        let negotiated = await connection.negotiated
        if let version = negotiated?.tlsVersion {
            findings.append(DoctorFinding(ok: true, check: Check.tls, detail: "\(version), the certificate checked for the account's domain"))
        } else {
            findings.append(DoctorFinding(ok: true, check: Check.tls,
                                          detail: "none (tls: none, allowed to a loopback server only): the password crosses in the clear",
                                          warning: true))
        }
        findings.append(DoctorFinding(ok: true, check: Check.login, detail: "logged in as \(negotiated?.jid.description ?? account)"
                                      + (negotiated.map { " with \($0.login)" } ?? "")))
        if negotiated?.resumable == true {
            findings.append(DoctorFinding(ok: true, check: Check.streamManagement,
                                          detail: "XEP-0198 with resumption: a dropped connection resumes without leaving the rooms"))
        } else {
            findings.append(DoctorFinding(ok: true, check: Check.streamManagement,
                                          detail: "the server offers no XEP-0198 resumption: after a dropped connection the relay "
                                              + "rejoins its rooms and catches up from their archives", warning: true))
        }
        findings.append(await ping(connection, domain: domain))
        return findings
    }

    private static func ping(_ connection: ClientConnection, domain: JID?) async -> DoctorFinding {
        guard let domain else { return DoctorFinding(ok: false, check: Check.ping, detail: "no server to ping") }
        do {
            let response = try await connection.sendIQ(IQ(type: .get, to: domain, payload: .ping), timeout: .seconds(10))
            let how = response.type == .result ? "answered a ping" : "answered a ping with \(response.error?.description ?? "an error")"
            return DoctorFinding(ok: true, check: Check.ping, detail: "\(domain) \(how)")
        } catch {
            return DoctorFinding(ok: false, check: Check.ping, detail: "no answer to a ping to \(domain): \(error)")
        }
    }

    /// What failed after the TCP connection (``routeFindings(_:)`` says how far it got before).
    private static func findings(for error: ClientError, account: String) -> [DoctorFinding] {
        switch error {
        case .unreachable:
            return []
        case .tlsNotOffered, .tlsRefused, .tlsFailed:
            return [DoctorFinding(ok: false, check: Check.tls, detail: error.description
                                  + " (xmpp.client.ca_file names an extra trust anchor; tls: direct for XEP-0368 ports)")]
        case .authenticationFailed, .noUsableMechanism, .channelBindingUnavailable, .passwordRequired, .scram, .bindFailed,
             .sasl2TasksRequired, .hashedToken, .keptCredentialRefused:
            return [DoctorFinding(ok: false, check: Check.login, detail: "as \(account): \(error.description)")]
        default:
            return [DoctorFinding(ok: false, check: Check.login, detail: error.description)]
        }
    }
}
