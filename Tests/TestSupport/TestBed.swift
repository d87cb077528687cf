import Foundation

/// The real XMPP server (Prosody, or ejabberd with `--xmpp ejabberd`) + Synapse test bed started by
/// `scripts/testbed start --dir DIR`, as described by the `export` lines of `DIR/env` (which `scripts/test` sources
/// before `swift test`).
///
/// A plain value: reading it does no I/O beyond the environment. Only ``restart(_:)``, ``kill(_:)`` and
/// ``startOne(_:)`` do I/O: they run `scripts/testbed` synchronously on the calling thread and return once the
/// server is stopped or ready (Prosody ≈ 0.1 s, Synapse ≈ 1 s, PostgreSQL ≈ 0.1 s). The bed's PostgreSQL, when it
/// runs one, is ``postgresURL`` (see `PostgresTestDatabase.swift`).
public struct TestBed: Sendable {
    /// One of the two servers of the test bed.
    public enum Server: String, Sendable, CaseIterable {
        /// The XMPP server, whichever it is (c2s for test clients, the XEP-0114 component port for the bridge, the
        /// MUC service).
        case xmpp
        /// The Matrix homeserver, with the bridge's appservice registration loaded.
        case synapse
        /// The PostgreSQL 15 cluster (only in a bed started with `--postgres`, as `scripts/test` does): stopping it
        /// is a fast shutdown, which ends every session.
        case postgres

        /// The XMPP server's name from when Prosody was the only one; the same as ``xmpp``.
        public static var prosody: Server { .xmpp }
    }

    /// Which XMPP server the bed runs (`ISTHMUS_TEST_XMPP_SERVER`). Tests that assert a behaviour only one server has
    /// ask this, and say in a comment why the difference is legitimate.
    public enum XMPPServer: String, Sendable {
        /// Prosody 0.12 (Debian), with `muc_mam`.
        case prosody
        /// ejabberd 23.01 (Debian), with mod_mam and rooms archiving by default; no XEP-0421 occupant-id.
        case ejabberd
    }

    /// The test bed's directory (`ISTHMUS_TESTBED_DIR`): configs, logs and databases.
    public let directory: URL
    /// The `scripts/testbed` that started the bed (`ISTHMUS_TESTBED_SCRIPT`).
    public let script: URL
    /// The bridge config written for the tests (`ISTHMUS_TEST_CONFIG`, `DIR/isthmus.yaml`).
    public let configFile: URL
    /// Which XMPP server runs (`ISTHMUS_TEST_XMPP_SERVER`; Prosody when unset).
    public let xmppServer: XMPPServer
    /// The loopback address every server listens on.
    public let host: String
    /// The XMPP domain of the test users, `localhost` (`ISTHMUS_TEST_XMPP_DOMAIN`).
    public let xmppDomain: String
    /// The MUC service, `conference.localhost` (`ISTHMUS_TEST_MUC_DOMAIN`).
    public let mucDomain: String
    /// A second MUC service, `noarchive.localhost`, whose rooms keep no archive unless their owner turns it on
    /// (`ISTHMUS_TEST_ARCHIVELESS_MUC_DOMAIN`).
    public let archivelessMUCDomain: String
    /// A second host of the same server whose c2s offers SASL2 (XEP-0388) with Bind2 (XEP-0386), `sasl2.localhost`,
    /// with its own `relay` and `carol` (`ISTHMUS_TEST_SASL2_DOMAIN`); nil on ejabberd 23.01, which has no SASL2.
    public let sasl2Domain: String?
    /// The XMPP server's client-to-server port, plain text (`ISTHMUS_TEST_C2S_PORT`).
    public let c2sPort: Int
    /// The XMPP server's XEP-0114 component port (`ISTHMUS_TEST_COMPONENT_PORT`).
    public let componentPort: Int
    /// The bridge component's domain, `bridge.localhost` (`ISTHMUS_TEST_COMPONENT_DOMAIN`).
    public let componentDomain: String
    /// The XEP-0114 handshake secret of the bridge component (`ISTHMUS_TEST_COMPONENT_SECRET`).
    public let componentSecret: String
    /// Synapse's client-server API base URL (`ISTHMUS_TEST_SYNAPSE_URL`).
    public let synapseURL: URL
    /// The port the bridge's appservice listener must use; Synapse pushes transactions there (`ISTHMUS_TEST_AS_PORT`).
    public let appServicePort: Int
    /// Where Synapse's single sign-on expects its OpenID Connect provider, which the SSO test runs itself
    /// (`ISTHMUS_TEST_SSO_PORT`); nil in a bed started before it had one.
    public let ssoPort: Int?
    /// The bridge's operations listener (`metrics.listen` in the bed's config).
    public let metricsPort: Int
    /// The token the bridge presents to Synapse (`ISTHMUS_TEST_AS_TOKEN`).
    public let asToken: String
    /// The token Synapse presents to the bridge (`ISTHMUS_TEST_HS_TOKEN`).
    public let hsToken: String
    /// Synapse's log file (`ISTHMUS_TEST_SYNAPSE_LOG`).
    public let synapseLog: URL
    /// The XMPP server's log file (`ISTHMUS_TEST_XMPP_LOG`, else the older `ISTHMUS_TEST_PROSODY_LOG`).
    public let xmppLog: URL
    /// Synapse's `registration_shared_secret`, for creating more Matrix users (`ISTHMUS_TEST_REGISTRATION_SECRET`).
    public let registrationSecret: String
    /// The password of every test user (`ISTHMUS_TEST_PASSWORD`).
    public let password: String
    /// The users that exist on both sides: `alice`, `bob` and `carol` (`@localhost` and `@…:localhost`).
    public let users: [String] = ["alice", "bob", "carol"]

    /// Reads the test bed from environment variables (by default the process's own).
    ///
    /// - Throws: ``TestBedError/notConfigured`` when `ISTHMUS_TEST_CONFIG` is unset (the tests were not started
    ///   through `scripts/test`), ``TestBedError/missingVariable(_:)`` or ``TestBedError/invalidValue(variable:value:)``.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> TestBed {
        guard let config = environment["ISTHMUS_TEST_CONFIG"], !config.isEmpty else {
            throw TestBedError.notConfigured
        }
        let reader = EnvironmentReader(environment: environment)
        return TestBed(
            directory: try reader.file("ISTHMUS_TESTBED_DIR"),
            script: try reader.file("ISTHMUS_TESTBED_SCRIPT"),
            configFile: URL(fileURLWithPath: config),
            xmppServer: try reader.xmppServer("ISTHMUS_TEST_XMPP_SERVER"),
            host: "127.0.0.1",
            xmppDomain: try reader.string("ISTHMUS_TEST_XMPP_DOMAIN"),
            mucDomain: try reader.string("ISTHMUS_TEST_MUC_DOMAIN"),
            archivelessMUCDomain: try reader.string("ISTHMUS_TEST_ARCHIVELESS_MUC_DOMAIN"),
            sasl2Domain: environment["ISTHMUS_TEST_SASL2_DOMAIN"].flatMap { $0.isEmpty ? nil : $0 },
            c2sPort: try reader.port("ISTHMUS_TEST_C2S_PORT"),
            componentPort: try reader.port("ISTHMUS_TEST_COMPONENT_PORT"),
            componentDomain: try reader.string("ISTHMUS_TEST_COMPONENT_DOMAIN"),
            componentSecret: try reader.string("ISTHMUS_TEST_COMPONENT_SECRET"),
            synapseURL: try reader.url("ISTHMUS_TEST_SYNAPSE_URL"),
            appServicePort: try reader.port("ISTHMUS_TEST_AS_PORT"),
            ssoPort: environment["ISTHMUS_TEST_SSO_PORT"] == nil ? nil : try reader.port("ISTHMUS_TEST_SSO_PORT"),
            metricsPort: try reader.port("ISTHMUS_TEST_METRICS_PORT"),
            asToken: try reader.string("ISTHMUS_TEST_AS_TOKEN"),
            hsToken: try reader.string("ISTHMUS_TEST_HS_TOKEN"),
            synapseLog: try reader.file("ISTHMUS_TEST_SYNAPSE_LOG"),
            xmppLog: try reader.file(environment["ISTHMUS_TEST_XMPP_LOG"] == nil ? "ISTHMUS_TEST_PROSODY_LOG" : "ISTHMUS_TEST_XMPP_LOG"),
            registrationSecret: try reader.string("ISTHMUS_TEST_REGISTRATION_SECRET"),
            password: try reader.string("ISTHMUS_TEST_PASSWORD")
        )
    }

    /// The SASL2 host for tests that need one: nil where the server has none (ejabberd 23.01: the test skips), and an
    /// error on a Prosody bed whose env names none (started before the host existed: restart it) — never a skip there.
    public func sasl2DomainIfOffered() throws -> String? {
        guard xmppServer == .prosody else { return nil }
        guard let sasl2Domain else { throw TestBedError.missingVariable("ISTHMUS_TEST_SASL2_DOMAIN") }
        return sasl2Domain
    }

    /// Stops `server` and starts it again with the same config; returns once it is ready. Blocks; does I/O.
    public func restart(_ server: Server) throws {
        try run(["restart", server.rawValue])
    }

    /// Stops `server` (TERM, then KILL after a deadline) and leaves it stopped. Blocks; does I/O.
    public func kill(_ server: Server) throws {
        try run(["kill", server.rawValue])
    }

    /// Starts `server` after ``kill(_:)``; returns once it is ready. Blocks; does I/O.
    public func startOne(_ server: Server) throws {
        try run(["start-one", server.rawValue])
    }

    /// Starts haproxy on ``appServicePort`` in front of bridge instances on loopback, each given as its appservice
    /// listener's and its metrics listener's port (`/ready` is health-checked there every 500 ms), as an operator runs
    /// an active/standby pair (`scripts/testbed start-lb`). Blocks until it listens; does I/O.
    public func startLoadBalancer(backends: [(appService: Int, metrics: Int)]) throws {
        try run(["start-lb", "--backends", backends.map { "\($0.appService):\($0.metrics)" }.joined(separator: ",")])
    }

    /// Stops the load balancer of ``startLoadBalancer(backends:)`` (idempotent). Blocks; does I/O.
    public func stopLoadBalancer() throws {
        try run(["stop-lb"])
    }

    /// Runs `scripts/testbed ARGS --dir DIR` and waits for it, at most `timeout` seconds (the script's own
    /// deadlines end it well before). Its output goes to a file, not a pipe, so servers it starts in the
    /// background cannot hold our read end open.
    private func run(_ arguments: [String], timeout: TimeInterval = 180) throws {
        let arguments = arguments + ["--dir", directory.path]
        let outputFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("isthmus-testbed-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: outputFile.path, contents: nil) else {
            throw TestBedError.commandFailed(arguments: arguments, status: -1, output: "cannot create \(outputFile.path)")
        }
        defer { try? FileManager.default.removeItem(at: outputFile) }
        let output = try FileHandle(forWritingTo: outputFile)
        defer { try? output.close() }

        let process = Process()
        process.executableURL = script
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let waited = exited.wait(timeout: .now() + timeout)

        let text = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
        guard waited == .success else {
            process.terminate()
            _ = process.waitForExit(timeout: 10)
            throw TestBedError.commandTimedOut(arguments: arguments, seconds: timeout, output: text)
        }
        _ = process.waitForExit(timeout: 10)   // at once (it exited); frees the Process, see waitForExit
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw TestBedError.commandFailed(arguments: arguments, status: process.terminationStatus, output: text)
        }
    }
}

/// Typed reads of environment variables, failing with the variable's name.
private struct EnvironmentReader {
    let environment: [String: String]

    func string(_ name: String) throws -> String {
        guard let value = environment[name], !value.isEmpty else { throw TestBedError.missingVariable(name) }
        return value
    }

    func port(_ name: String) throws -> Int {
        let value = try string(name)
        guard let port = Int(value), (1...65535).contains(port) else {
            throw TestBedError.invalidValue(variable: name, value: value)
        }
        return port
    }

    func url(_ name: String) throws -> URL {
        let value = try string(name)
        guard let url = URL(string: value), url.scheme != nil, url.host != nil else {
            throw TestBedError.invalidValue(variable: name, value: value)
        }
        return url
    }

    /// Prosody when unset: beds written before ejabberd was supported say nothing.
    func xmppServer(_ name: String) throws -> TestBed.XMPPServer {
        guard let value = environment[name], !value.isEmpty else { return .prosody }
        guard let server = TestBed.XMPPServer(rawValue: value) else {
            throw TestBedError.invalidValue(variable: name, value: value)
        }
        return server
    }

    func file(_ name: String) throws -> URL {
        let value = try string(name)
        guard value.hasPrefix("/") else { throw TestBedError.invalidValue(variable: name, value: value) }
        return URL(fileURLWithPath: value)
    }
}
