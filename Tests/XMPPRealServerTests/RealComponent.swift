import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPPComponent

/// A ``ComponentConnection`` to the test bed's Prosody, running in the background, with its events queued.
struct RealComponent {
    let bed: TestBed
    let connection: ComponentConnection
    let runner: BackgroundTask
    let events: AsyncQueue<ComponentEvent>

    /// The bed's component settings with quick timers (so a restart of Prosody is noticed and recovered quickly).
    static func configuration(_ bed: TestBed, secret: String? = nil, port: Int? = nil) -> ComponentConfiguration {
        ComponentConfiguration(
            host: bed.host, port: port ?? bed.componentPort, componentDomain: bed.componentDomain,
            secret: secret ?? bed.componentSecret, serverDomain: bed.xmppDomain, pingInterval: .seconds(5),
            pingTimeout: .seconds(5), connectTimeout: .seconds(5), handshakeTimeout: .seconds(5),
            requestTimeout: .seconds(10), reconnectInitialDelay: .milliseconds(100),
            reconnectMaximumDelay: .seconds(1), tickInterval: .milliseconds(50))
    }

    /// Quiet unless `ISTHMUS_TEST_LOG` names a level (e.g. `debug`), then to stderr.
    static var logger: Logger {
        guard let name = ProcessInfo.processInfo.environment["ISTHMUS_TEST_LOG"], let level = Logger.Level(name: name) else {
            return .disabled
        }
        return Logger(label: "xmpp.component", level: level)
    }

    /// Starts a connection (not yet waiting for it). It is closed gracefully when `test` ends, even if the test
    /// throws, so that the next test's connection is not refused as a `conflict`.
    init(_ bed: TestBed, secret: String? = nil, in test: XCTestCase) {
        self.bed = bed
        let connection = ComponentConnection(configuration: Self.configuration(bed, secret: secret), logger: Self.logger)
        self.connection = connection
        events = AsyncQueue.collecting(connection.events)
        runner = test.runUntilTeardown({ await connection.run() }, closing: { await connection.close() })
    }

    /// Starts a connection and waits until the handshake succeeded.
    static func connected(_ bed: TestBed, in test: XCTestCase) async throws -> RealComponent {
        let component = RealComponent(bed, in: test)
        let event = try await component.nextEvent(within: 10)
        guard event == .connected(reconnected: false) else { throw Unexpected("first event \(event)") }
        return component
    }

    func nextEvent(within seconds: Double = 10) async throws -> ComponentEvent {
        try await events.next(within: seconds, "a component event")
    }

    /// The next message addressed to `occupant` that matches (other events stay queued).
    func nextMessage(
        to occupant: JID, within seconds: Double = 10, where matches: @escaping @Sendable (Message) -> Bool = { _ in true }
    ) async throws -> Message {
        let event = try await events.next(within: seconds, "a message to \(occupant)") { event in
            if case .stanza(.message(let message)) = event { message.to == occupant && matches(message) } else { false }
        }
        guard case .stanza(.message(let message)) = event else { fatalError("unreachable") }
        return message
    }

    /// Joins and expects success.
    @discardableResult
    func join(_ room: JID, nick: String, as occupant: JID) async throws -> SelfPresence {
        let outcome = try await connection.join(room: room, nick: nick, occupant: occupant)
        guard case .joined(let selfPresence) = outcome else { throw Unexpected("join of \(room) as \(nick): \(outcome)") }
        return selfPresence
    }

    /// Closes gracefully (so the next test's connection is not refused as a conflict).
    func close() async {
        await connection.close()
        await runner.finished()
    }

    struct Unexpected: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

extension TestBed {
    /// A room name no other test uses.
    func uniqueRoom(_ label: String) -> JID {
        JID("\(label)-\(UUID().uuidString.prefix(8).lowercased())@\(mucDomain)")!
    }

    /// An occupant JID under the bridge component, like a Matrix user's puppet.
    func puppet(_ localpart: String) -> JID {
        JID("\(localpart)@\(componentDomain)/isthmus")!
    }

    /// A c2s test user (alice, bob or carol) logged in.
    func client(_ user: String) async throws -> XMPPTestClient {
        try await XMPPTestClient.connect(host: host, port: c2sPort, user: user, domain: xmppDomain, password: password)
    }
}

extension XCTestCase {
    /// Runs `run` in the background; when the test ends (even by throwing) `closing` closes it gracefully and the task
    /// is stopped, so the next test's connection is not refused as a `conflict`.
    func runUntilTeardown(_ run: @escaping @Sendable () async -> Void, closing: @escaping @Sendable () async -> Void) -> BackgroundTask {
        let runner = BackgroundTask { await run() }
        addTeardownBlock {
            await closing()
            await runner.stop()
        }
        return runner
    }
}
