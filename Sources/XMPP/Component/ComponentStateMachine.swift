import IsthmusCommon
import XMLStream

/// The XEP-0114 component protocol as a value: stream events and clock ticks in, actions out. No sockets, no clocks —
/// the connection actor feeds it parsed events and the current time and performs the actions it returns, in order.
///
/// Life of one connection: ``connectionOpened(now:)`` → send our stream header; the server's header (with an `id`)
/// → send `<handshake>hex(SHA-1(id + secret))</handshake>` (XEP-0114 §3); an empty `<handshake/>` → established.
/// While connected, stanzas are delivered; silence longer than the ping interval sends a XEP-0199 ping to the server
/// and silence for the ping timeout after it declares the link dead. A `<stream:error>` ends the connection with the
/// matching ``ComponentError`` (`not-authorized` = wrong secret, `conflict` = another instance, …).
public struct ComponentStateMachine: Sendable {
    /// What the machine needs to know.
    public struct Configuration: Sendable, Hashable {
        /// The component's domain, e.g. `bridge.localhost` (the `to` of our header; every `from` must be in it).
        public var componentDomain: String
        /// The shared secret of the handshake.
        public var secret: String
        /// Where keepalive pings go (any answer, even an error, proves the link is alive).
        public var pingTarget: JID
        /// Silence after which a keepalive ping is sent.
        public var pingInterval: Duration
        /// Silence after a keepalive ping after which the link is declared dead.
        public var pingTimeout: Duration
        /// Longest wait from TCP connect to an accepted handshake.
        public var handshakeTimeout: Duration
        /// Longest wait for the server's `</stream:stream>` after ours.
        public var closeTimeout: Duration

        public init(
            componentDomain: String, secret: String, pingTarget: JID, pingInterval: Duration, pingTimeout: Duration,
            handshakeTimeout: Duration, closeTimeout: Duration = .seconds(2)
        ) {
            self.componentDomain = componentDomain
            self.secret = secret
            self.pingTarget = pingTarget
            self.pingInterval = pingInterval
            self.pingTimeout = pingTimeout
            self.handshakeTimeout = handshakeTimeout
            self.closeTimeout = closeTimeout
        }
    }

    /// What the connection actor must do, in order.
    public enum Action: Sendable, Hashable {
        /// Write our stream header (`<stream:stream xmlns='jabber:component:accept' … to='DOMAIN'>`).
        case sendStreamHeader(to: String)
        /// Write `<handshake>DIGEST</handshake>`.
        case sendHandshake(digest: String)
        /// Write a stanza we generate ourselves (keepalive ping, answer to the server's ping).
        case send(Stanza)
        /// Write `<stream:error>`.
        case sendStreamError(StreamError)
        /// Write `</stream:stream>`.
        case sendStreamEnd
        /// The handshake was accepted: report connected.
        case established
        /// Hand a stanza to the bridge.
        case deliver(Stanza)
        /// A top-level element that is not a valid stanza: log it and drop it.
        case dropMalformed(XElement, StanzaParseError)
        /// Close the socket; nil after a graceful close we asked for.
        case disconnect(ComponentError?)
    }

    /// Where the connection stands.
    public enum State: Sendable, Hashable {
        case idle
        case awaitingStreamHeader(since: ContinuousClock.Instant)
        case awaitingHandshake(since: ContinuousClock.Instant)
        case connected
        case closing(since: ContinuousClock.Instant)
        case finished
    }

    /// The settings this machine runs with.
    public let configuration: Configuration
    /// Where the connection stands now.
    public private(set) var state: State = .idle
    private var keepalive: Keepalive

    /// A machine for one new connection, `idle` until ``connectionOpened(now:)``.
    public init(configuration: Configuration) {
        self.configuration = configuration
        keepalive = Keepalive(target: configuration.pingTarget, interval: configuration.pingInterval, timeout: configuration.pingTimeout)
    }

    /// Whether stanzas may be sent.
    public var isConnected: Bool { state == .connected }

    /// TCP is up: open the stream.
    public mutating func connectionOpened(now: ContinuousClock.Instant) -> [Action] {
        guard state == .idle else { return [] }
        state = .awaitingStreamHeader(since: now)
        keepalive.received(now: now)
        return [.sendStreamHeader(to: configuration.componentDomain)]
    }

    /// Bytes arrived (even just whitespace): the link is alive.
    public mutating func bytesReceived(now: ContinuousClock.Instant) {
        keepalive.received(now: now)
    }

    /// One event from the stream parser.
    public mutating func received(_ event: XMLStreamEvent, now: ContinuousClock.Instant) -> [Action] {
        keepalive.received(now: now)
        switch (state, event) {
        case (.awaitingStreamHeader, .streamStart(let header)):
            guard header.namespace == XMPPNamespace.streams, header.name == "stream",
                  header.contentNamespace == XMPPNamespace.component else {
                return fail(.protocolViolation("stream header is not a jabber:component:accept stream"), condition: .invalidNamespace)
            }
            guard let id = header.id, !id.isEmpty else {
                return fail(.protocolViolation("stream header has no id"), condition: .invalidXML)
            }
            state = .awaitingHandshake(since: now)
            return [.sendHandshake(digest: Digest.hex(Digest.sha1(Array((id + configuration.secret).utf8))))]
        case (_, .element(let element)) where element.name == "error" && element.namespace == XMPPNamespace.streams:
            state = .finished
            let streamError = (try? StreamError(element: element)) ?? StreamError(condition: .undefinedCondition)
            return [.disconnect(ComponentError(streamError: streamError))]
        case (.awaitingHandshake, .element(let element))
            where element.name == "handshake" && element.namespace == XMPPNamespace.component:
            state = .connected
            keepalive.restart()
            return [.established]
        case (.connected, .element(let element)), (.closing, .element(let element)):
            return handleStanza(element)
        case (.connected, .streamEnd):
            state = .finished
            return [.sendStreamEnd, .disconnect(.closedByServer)]
        case (.closing, .streamEnd):
            state = .finished
            return [.disconnect(nil)]
        case (.finished, _), (.idle, _):
            return []
        case (.awaitingStreamHeader, .streamEnd), (.awaitingHandshake, .streamEnd):
            state = .finished
            return [.disconnect(.closedByServer)]
        case (_, .streamStart):
            return fail(.protocolViolation("second stream header"), condition: .invalidXML)
        case (_, .element(let element)):
            return fail(.protocolViolation("<\(element.name)> before the handshake completed"), condition: .notAuthorized)
        }
    }

    /// The parser refused the server's bytes: answer with a stream error and close.
    public mutating func parseFailed(_ error: XMLStreamError) -> [Action] {
        guard state != .finished else { return [] }
        return fail(.protocolViolation(error.description), condition: StreamError(refusal: error).condition, text: error.message)
    }

    /// Time passed: send a keepalive ping or declare the link dead; enforce the handshake and close deadlines.
    public mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .idle, .finished:
            return []
        case .awaitingStreamHeader(let since), .awaitingHandshake(let since):
            guard now - since >= configuration.handshakeTimeout else { return [] }
            state = .finished
            return [.disconnect(.timeout(.handshake))]
        case .closing(let since):
            guard now - since >= configuration.closeTimeout else { return [] }
            state = .finished
            return [.disconnect(nil)]
        case .connected:
            switch keepalive.tick(now: now, from: JID(localpart: nil, domain: configuration.componentDomain)) {
            case .quiet:
                return []
            case .ping(let ping):
                return [.send(.iq(ping))]
            case .dead:
                state = .finished
                return [.disconnect(.timeout(.keepalive))]
            }
        }
    }

    /// We want to stop: send `</stream:stream>` and wait (bounded by the close timeout) for the server's.
    public mutating func closeRequested(now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .connected:
            state = .closing(since: now)
            return [.sendStreamEnd]
        case .awaitingStreamHeader, .awaitingHandshake:
            state = .finished
            return [.sendStreamEnd, .disconnect(nil)]
        case .idle:
            state = .finished
            return []
        case .closing, .finished:
            return []
        }
    }

    /// TCP closed under us (end of file or an I/O error described by `reason`).
    public mutating func connectionClosed(reason: String?) -> [Action] {
        switch state {
        case .finished:
            return []
        case .closing:
            state = .finished
            return [.disconnect(nil)]
        default:
            state = .finished
            return [.disconnect(reason.map(ComponentError.connectionLost) ?? .closedByServer)]
        }
    }

    /// Checks a stanza before it is sent: we must be connected, and its `from` must be in the component domain
    /// (Prosody kills the whole link with `<invalid-from/>` otherwise).
    public func validateOutgoing(_ stanza: Stanza) throws(ComponentError) {
        guard state == .connected else { throw .notConnected }
        guard let from = stanza.from, from.domain == configuration.componentDomain.lowercased() else {
            throw .fromOutsideComponentDomain(stanza.from)
        }
    }

    private mutating func handleStanza(_ element: XElement) -> [Action] {
        let stanza: Stanza
        do {
            stanza = try Stanza(element: element)
        } catch {
            return [.dropMalformed(element, error)]
        }
        guard case .iq(let iq) = stanza else { return [.deliver(stanza)] }
        if keepalive.isAnswer(iq, implicitSender: false) { return [] }
        // XEP-0199 §4: answer the server's pings to the component itself.
        if iq.type == .get, iq.payload == .ping, iq.to?.description == configuration.componentDomain, state == .connected {
            return [.send(.iq(iq.result()))]
        }
        return [.deliver(stanza)]
    }

    private mutating func fail(
        _ error: ComponentError, condition: StreamErrorCondition, text: String? = nil
    ) -> [Action] {
        state = .finished
        return [.sendStreamError(StreamError(condition: condition, text: text)), .sendStreamEnd, .disconnect(error)]
    }
}
