import IsthmusCommon

/// The XMPP half of `isthmus doctor`: connects once with the configured secret and says plainly what works and
/// what does not. Does I/O; no retries; takes at most the connect, handshake and one request timeout.
public enum XMPPDoctor {
    /// Check names, as printed.
    public enum Check {
        /// TCP connect to the component port.
        public static let reachable = "XMPP server reachable"
        /// The XEP-0114 handshake with the secret.
        public static let handshake = "XMPP component handshake"
        /// A XEP-0199 ping through the link.
        public static let ping = "XMPP server answers pings"
    }

    /// Connects to `configuration.host:port`, performs the XEP-0114 handshake, pings the server and closes.
    /// Returns one finding per step reached; the first failure ends the check.
    public static func check(configuration: ComponentConfiguration, logger: Logger) async -> [DoctorFinding] {
        let connection = ComponentConnection(configuration: configuration, logger: logger)
        let server = "\(configuration.host):\(configuration.port)"
        let domain = configuration.componentDomain
        return await DoctorFinding.verdict(running: { await connection.run() }) {
            for await event in connection.events {
                switch event {
                case .connected:
                    var findings = [
                        DoctorFinding(ok: true, check: Check.reachable, detail: "\(server) accepts connections"),
                        DoctorFinding(ok: true, check: Check.handshake,
                                      detail: "the XMPP server accepted the secret for \(domain)"),
                    ]
                    findings.append(await ping(connection, configuration: configuration))
                    await connection.close()
                    return findings
                case .disconnected(let error):
                    return findingsFor(error, server: server, domain: domain)
                case .stanza:
                    continue
                }
            }
            return [DoctorFinding(ok: false, check: Check.handshake, detail: "the connection stopped without an answer")]
        }
    }

    private static func ping(_ connection: ComponentConnection, configuration: ComponentConfiguration) async -> DoctorFinding {
        let target = configuration.pingTarget
        do {
            let response = try await connection.sendIQ(
                IQ(type: .get, from: configuration.componentJID, to: target, payload: .ping),
                timeout: min(configuration.requestTimeout, .seconds(10)))
            if response.type == .result {
                return DoctorFinding(ok: true, check: Check.ping, detail: "\(target) answered a ping")
            }
            // Any answer proves the link works; an error only means that entity does not do pings.
            return DoctorFinding(ok: true, check: Check.ping,
                                 detail: "\(target) answered a ping with \(response.error?.description ?? "an error")")
        } catch {
            return DoctorFinding(ok: false, check: Check.ping, detail: "no answer to a ping to \(target): \(error)")
        }
    }

    private static func findingsFor(_ error: ComponentError, server: String, domain: String) -> [DoctorFinding] {
        let reachable = DoctorFinding(ok: true, check: Check.reachable, detail: "\(server) accepts connections")
        switch error {
        case .connectionRefused:
            return [DoctorFinding(ok: false, check: Check.reachable, detail: "nothing is listening on \(server) (connection refused)")]
        case .connectionFailed, .timeout(.connect):
            return [DoctorFinding(ok: false, check: Check.reachable, detail: error.description)]
        case .notAuthorized:
            return [reachable, DoctorFinding(
                ok: false, check: Check.handshake,
                detail: "the XMPP server rejected the component secret for \(domain) (not-authorized): "
                    + "xmpp.component_secret must match the server's component_secret")]
        case .conflict:
            return [reachable, DoctorFinding(
                ok: false, check: Check.handshake,
                detail: "another connection is already serving \(domain) (conflict): is the bridge already running?")]
        case .hostUnknown:
            return [reachable, DoctorFinding(
                ok: false, check: Check.handshake,
                detail: "the XMPP server does not know the component \(domain) (host-unknown): declare it in the server's config")]
        default:
            return [reachable, DoctorFinding(ok: false, check: Check.handshake, detail: error.description)]
        }
    }
}
