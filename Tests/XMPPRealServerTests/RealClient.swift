import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPPClient

/// A ``ClientConnection`` to the test bed's server as one of its accounts (`carol` by default, on `localhost` or, with
/// `domain`, the SASL2 host), over plain c2s on loopback, running in the background with its events queued. Closed
/// gracefully and stopped when the test ends.
struct RealClient {
    let connection: ClientConnection
    let events: AsyncQueue<ClientEvent>
    let runner: BackgroundTask

    /// The stream settings: the bed's password unless `password`, acks asked for only after `ackEvery` stanzas.
    static func stream(_ bed: TestBed, domain: String? = nil, password: String? = nil, resource: String, ackEvery: Int = 100,
                       userAgent: SASL2UserAgent = .random()) -> ClientStateMachine.Configuration {
        ClientStateMachine.Configuration(
            domain: domain ?? bed.xmppDomain, username: "carol", credential: .password(password ?? bed.password), resource: resource,
            allowPlaintext: true, ackEvery: ackEvery, pingInterval: .seconds(30), pingTimeout: .seconds(10),
            handshakeTimeout: .seconds(10), userAgent: userAgent)
    }

    /// `sendWindow`: how many of its stanzas may wait for the server's acknowledgement before a message waits.
    init(_ bed: TestBed, in test: XCTestCase, stream: ClientStateMachine.Configuration, resuming: ClientStateMachine.Resumption? = nil,
         keeper: (any ClientSessionKeeper)? = nil, credentials: CredentialCache = CredentialCache(), sendWindow: Int = 128) {
        var configuration = ClientConfiguration(host: bed.host, port: bed.c2sPort, stream: stream, connectTimeout: .seconds(5),
                                                reconnectInitialDelay: .milliseconds(100), reconnectMaximumDelay: .seconds(1),
                                                tickInterval: .milliseconds(50))
        configuration.sendWindow = sendWindow
        let connection = ClientConnection(configuration: configuration, resuming: resuming, keeper: keeper, credentials: credentials,
                                          logger: RealComponent.logger)
        self.connection = connection
        events = AsyncQueue.collecting(connection.events)
        runner = test.runUntilTeardown({ await connection.run() }, closing: { await connection.close() })
    }

    /// The next event that is not a report of authentication (SCRAM's salted password comes first on every login).
    static func next(_ events: AsyncQueue<ClientEvent>, _ what: String) async throws -> ClientEvent {
        while true {
            let event = try await events.next(within: 10, what)
            if case .authenticated = event { continue }
            return event
        }
    }

    func next(_ what: String) async throws -> ClientEvent {
        try await Self.next(events, what)
    }

    /// A XEP-0199 ping to the server.
    static func ping(_ domain: String, id: String) -> Stanza {
        .iq(IQ(type: .get, to: JID(domain), id: StanzaAttributeID(id)!, payload: .ping))
    }
}
