import IsthmusCommon
import XMLStream

/// The client (c2s) stream of the bridge's own account as a value (RFC 6120 + XEP-0198): stream events, TLS and clock
/// ticks in, actions out. No sockets, no clocks, no TLS: the connection actor feeds it parsed events and the current
/// time and performs the actions it returns, in order.
///
/// Life of one connection: ``connectionOpened(now:directTLS:)`` → our header; the server's features → STARTTLS
/// (`<proceed/>` → ``Action/startTLS``; ``tlsEstablished(_:)`` → restart), then SASL2 when offered (XEP-0388, with
/// Bind2, inline XEP-0198 and FAST tokens as the server offers them; no restart: `+SASL2`) or else legacy SASL
/// (RFC 6120 §6) → restart; SCRAM's server signature MUST verify either way. Then, unless SASL2 already did it, a
/// XEP-0198 `<resume/>` of the session given at init or a resource bind and `<enable/>` → ``Action/established(_:)``. While connected, stanzas are delivered, `<r/>` is
/// answered with the count of ``handled()`` stanzas, `<a/>` confirms ours, and silence sends a XEP-0199 ping.
public struct ClientStateMachine: Sendable {
    /// The TLS channel the connection runs in, as the connection actor reports it.
    public struct TLS: Sendable, Hashable {
        /// What SASLChoice needs to know about the channel.
        public var channel: SASLChoice.Channel
        /// The channel-binding data the connection computed (RFC 9266 `tls-exporter`, RFC 5929 `tls-server-end-point`).
        public var bindingData: [ChannelBindingType: [UInt8]]

        public init(channel: SASLChoice.Channel, bindingData: [ChannelBindingType: [UInt8]]) {
            self.channel = channel
            self.bindingData = bindingData
        }
    }

    /// A XEP-0198 session kept from an earlier connection, to resume instead of binding.
    public struct Resumption: Sendable, Hashable {
        /// The counts and unacknowledged stanzas the store kept.
        public var streamManagement: StreamManagement<Stanza>
        /// The full JID that session was bound to.
        public var jid: JID

        public init(streamManagement: StreamManagement<Stanza>, jid: JID) {
            self.streamManagement = streamManagement
            self.jid = jid
        }
    }

    /// What the connection actor must do, in order.
    public enum Action: Sendable, Hashable {
        /// Write our stream header (`<stream:stream xmlns='jabber:client' version='1.0' to='DOMAIN' from='ACCOUNT'>`);
        /// `from` (the bare account) only once the stream is encrypted or plaintext is allowed (RFC 6120 §4.7.1: the
        /// account name is not sent in the clear; XEP-0484 needs it to offer FAST).
        case sendStreamHeader(to: String, from: JID? = nil)
        /// Start a fresh parser for the restarted stream (after TLS and after SASL success, RFC 6120 §4.3.3).
        case resetParser
        /// Do the TLS handshake on the socket now (after `<proceed/>`), then call ``tlsEstablished(_:)``.
        case startTLS
        /// Write a negotiation element (`<starttls/>`, `<auth/>`, `<response/>`).
        case sendElement(XElement)
        /// Write a stanza.
        case send(Stanza)
        /// Write a XEP-0198 nonza.
        case sendNonza(StreamManagementNonza)
        /// Write `<stream:error>`, with the application-specific condition child when given.
        case sendStreamError(StreamError, applicationCondition: XElement? = nil)
        /// Write `</stream:stream>`.
        case sendStreamEnd
        /// SASL succeeded; the salted password (SCRAM only) is worth caching instead of the password.
        case authenticated(saltedPassword: SCRAMClient.SaltedPassword?)
        /// Keep this XEP-0484 FAST token for the next login, replacing the one kept (nil: forget it — the server
        /// refused it). Comes before the `<authenticate>` that uses a token, with its count raised.
        case fastToken(FASTToken?)
        /// The server refused an exchange made with the kept salted password: forget it (the password comes next).
        case saltedPasswordRefused
        /// The server bound this full JID.
        case bound(JID)
        /// The earlier session was resumed; these stanzas follow as ``send(_:)`` actions, in order.
        case resumed(resend: [Stanza])
        /// The earlier session could not be resumed; the server may or may not have handled these (check the archive).
        case resumeFailed(unknown: [Stanza])
        /// The server confirmed these stanzas of ours, oldest first.
        case acknowledged([Stanza])
        /// Stanzas may flow: report connected as this JID.
        case established(JID)
        /// Hand a stanza to the bridge; call ``handled()`` once its effect is durable.
        case deliver(Stanza)
        /// The machine dealt with an inbound stanza itself (a ping, a ping's answer, a malformed one): call
        /// ``handled()`` for it once every stanza delivered before it is handled, so `h` counts in arrival order.
        case handledHere
        /// A top-level element that is not a valid stanza: log it and drop it.
        case dropMalformed(XElement, StanzaParseError)
        /// Close the socket; nil after a graceful close we asked for.
        case disconnect(ClientError?)
    }

    /// Where the connection stands.
    public enum State: Sendable, Hashable {
        case idle
        case awaitingStreamHeader
        case awaitingFeatures
        case awaitingTLSProceed
        case awaitingTLS
        case authenticating
        case resuming
        case binding
        case enablingStreamManagement
        case connected
        case closing(since: ContinuousClock.Instant)
        case finished
    }

    /// The settings this machine runs with.
    public let configuration: Configuration
    /// Where the connection stands now.
    public internal(set) var state: State = .idle
    /// The XEP-0198 session: what to persist (with ``jid``) for a resumption. Nil when SM is not in use.
    public internal(set) var streamManagement: StreamManagement<Stanza>?
    /// The full JID once bound or resumed.
    public internal(set) var jid: JID?
    /// The TLS channel, once up.
    public internal(set) var tls: TLS?
    /// The SASL mechanism chosen, once authentication started (for logs and `isthmus doctor`).
    public internal(set) var mechanism: SASLMechanismName?
    /// What SASL2 did on this connection; nil when it was not used.
    public internal(set) var sasl2: SASL2Use?
    /// The salted password and FAST token this machine started with, as it has changed them (the connection keeps
    /// them for the next login, following the ``Action/fastToken(_:)`` and ``Action/saltedPasswordRefused`` actions).
    public internal(set) var credentials: CredentialCache

    let nonce: String
    var resumption: Resumption?
    var authenticated = false
    var negotiationStarted: ContinuousClock.Instant?
    var sasl: SASLExchange?
    /// What the SASL2 `<authenticate>` asked for (how its `<success>` is read).
    var sasl2Request: SASL2Request?
    var featuresAfterAuthentication: StreamFeatures?
    var bindID: StanzaAttributeID?
    /// Stanzas that came after the bind but before `<enabled/>` (a room may route to the new resource at once).
    /// They are delivered once established, and the server did not count them (XEP-0198 §4), so neither do we.
    var beforeEnabled: [XElement] = []
    /// How many of the next ``handled()`` calls are for those uncounted stanzas.
    var uncounted = 0
    private var keepalive: Keepalive

    /// The SASL exchange under way.
    enum SASLExchange: Sendable {
        case plain
        case scram(SCRAMClient, sentFinal: Bool)
        case hashedToken(HashedTokenClient)
    }

    /// A machine for one new connection, `idle` until ``connectionOpened(now:directTLS:)``. `resuming`: the session to
    /// resume after authentication; `credentials`: what earlier logins left (used when the server's offer allows);
    /// `nonce`: the SCRAM client nonce (fresh per connection).
    public init(configuration: Configuration, resuming: Resumption? = nil, credentials: CredentialCache = CredentialCache(),
                nonce: String = SCRAMClient.randomNonce()) {
        self.configuration = configuration
        self.resumption = resuming
        self.credentials = credentials
        self.nonce = nonce
        keepalive = Keepalive(target: JID(localpart: nil, domain: configuration.domain), interval: configuration.pingInterval,
                              timeout: configuration.pingTimeout)
    }

    /// Whether stanzas may be sent.
    public var isConnected: Bool { state == .connected }

    /// TCP is up (inside TLS already when `directTLS` is given, XEP-0368): open the stream.
    public mutating func connectionOpened(now: ContinuousClock.Instant, directTLS: TLS? = nil) -> [Action] {
        guard state == .idle else { return [] }
        state = .awaitingStreamHeader
        negotiationStarted = now
        keepalive.received(now: now)
        tls = directTLS
        return [streamHeader]
    }

    /// Our stream header, with `from` when the account name may be sent (see ``Action/sendStreamHeader(to:from:)``).
    var streamHeader: Action {
        let from = tls != nil || configuration.allowPlaintext ? JID(localpart: configuration.username, domain: configuration.domain) : nil
        return .sendStreamHeader(to: configuration.domain, from: from)
    }

    /// Bytes arrived (even just whitespace): the link is alive.
    public mutating func bytesReceived(now: ContinuousClock.Instant) {
        keepalive.received(now: now)
    }

    /// One event from the stream parser.
    public mutating func received(_ event: XMLStreamEvent, now: ContinuousClock.Instant) -> [Action] {
        keepalive.received(now: now)
        switch (state, event) {
        case (.idle, _), (.finished, _):
            return []
        case (.awaitingStreamHeader, .streamStart(let header)):
            guard header.namespace == XMPPNamespace.streams, header.name == "stream",
                  header.contentNamespace == XMPPNamespace.client else {
                return fail(.protocolViolation("stream header is not a jabber:client stream"), condition: .invalidNamespace)
            }
            guard let id = header.id, !id.isEmpty else {
                return fail(.protocolViolation("stream header has no id"), condition: .invalidXML)
            }
            state = .awaitingFeatures
            return []
        case (_, .streamStart):
            return fail(.protocolViolation("unexpected stream header"), condition: .invalidXML)
        case (_, .element(let element)) where element.name == "error" && element.namespace == XMPPNamespace.streams:
            state = .finished
            return [.disconnect(.streamError((try? StreamError(element: element)) ?? StreamError(condition: .undefinedCondition)))]
        case (.closing, .streamEnd):
            state = .finished
            return [.disconnect(nil)]
        case (_, .streamEnd):
            state = .finished
            return [.sendStreamEnd, .disconnect(.closedByServer)]
        case (.connected, .element(let element)), (.closing, .element(let element)):
            return receivedWhileConnected(element)
        case (_, .element(let element)):
            return negotiate(element, now: now)
        }
    }

    /// The parser refused the server's bytes: answer with a stream error and close.
    public mutating func parseFailed(_ error: XMLStreamError) -> [Action] {
        guard state != .finished else { return [] }
        return fail(.protocolViolation(error.description), condition: StreamError(refusal: error).condition, text: error.message)
    }

    /// Time passed: enforce the negotiation and close deadlines, send a keepalive ping or declare the link dead.
    public mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .idle, .finished:
            return []
        case .closing(let since):
            guard now - since >= configuration.closeTimeout else { return [] }
            state = .finished
            return [.disconnect(nil)]
        case .connected:
            switch keepalive.tick(now: now, from: nil) {
            case .quiet:
                return []
            case .ping(let ping):
                return record(.iq(ping))
            case .dead:
                state = .finished
                return [.disconnect(.timeout(.keepalive))]
            }
        default:
            guard let started = negotiationStarted, now - started >= configuration.handshakeTimeout else { return [] }
            state = .finished
            return [.disconnect(.timeout(.negotiation))]
        }
    }

    /// Sends a stanza of ours: recorded for XEP-0198 (resent on resumption until acknowledged), followed by `<r/>`
    /// every ``Configuration/ackEvery`` stanzas. Throws `.notConnected` unless established.
    public mutating func send(_ stanza: Stanza) throws(ClientError) -> [Action] {
        guard state == .connected else { throw .notConnected }
        return record(stanza)
    }

    /// Asks the server to acknowledge what we sent (XEP-0198 `<r/>`) now, unless every stanza of ours was asked about
    /// already (one request covers them; a second adds nothing). Nothing without XEP-0198 or before established.
    public mutating func requestAcknowledgement() -> [Action] {
        guard state == .connected, var management = streamManagement, management.shouldRequestAck(every: 1) else { return [] }
        management.ackRequested()
        streamManagement = management
        return [.sendNonza(.requestAck)]
    }

    /// An inbound stanza's effect is durable: it counts in the next `h` we send (XEP-0198 §4).
    public mutating func handled() {
        guard uncounted == 0 else {
            uncounted -= 1
            return
        }
        streamManagement?.handled()
    }

    /// We want to stop: `<a/>` (with XEP-0198) then `</stream:stream>`, and wait (bounded by the close timeout) for the
    /// server's. This ends the session on the server; a crash restart that wants to resume just drops the socket.
    public mutating func closeRequested(now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .connected:
            state = .closing(since: now)
            return (streamManagement.map { [.sendNonza($0.ack)] } ?? []) + [.sendStreamEnd]
        case .idle:
            state = .finished
            return []
        case .closing, .finished:
            return []
        default:
            state = .finished
            return [.sendStreamEnd, .disconnect(nil)]
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
            return [.disconnect(reason.map(ClientError.connectionLost) ?? .closedByServer)]
        }
    }

    /// Writes a stanza of ours and counts it for XEP-0198 (keepalive pings and ping answers count too).
    mutating func record(_ stanza: Stanza) -> [Action] {
        guard var management = streamManagement else { return [.send(stanza)] }
        management.sent(stanza)
        var actions: [Action] = [.send(stanza)]
        if management.shouldRequestAck(every: configuration.ackEvery) {
            management.ackRequested()
            actions.append(.sendNonza(.requestAck))
        }
        streamManagement = management
        return actions
    }

    mutating func receivedWhileConnected(_ element: XElement) -> [Action] {
        if element.namespace == XMPPNamespace.streamManagement {
            return receivedNonza(element)
        }
        if sasl2 != nil, element.name == "features", element.namespace == XMPPNamespace.streams {
            return []   // XEP-0388 §4.5.1: features follow SASL2's success even when it established the session
        }
        let stanza: Stanza
        do {
            stanza = try Stanza(element: element)
        } catch {
            // Still a stanza for XEP-0198 counting when it is one by name: the server counted it.
            return (Self.isStanza(element) ? [.handledHere] : []) + [.dropMalformed(element, error)]
        }
        guard case .iq(let iq) = stanza else { return [.deliver(stanza)] }
        if keepalive.isAnswer(iq, implicitSender: true) {
            return [.handledHere]
        }
        // XEP-0199 §3: answer the server's pings ourselves.
        if iq.type == .get, iq.payload == .ping, state == .connected {
            return [.handledHere] + record(.iq(iq.result()))
        }
        return [.deliver(stanza)]
    }

    /// Whether a top-level element is a stanza by name (what XEP-0198 counts).
    static func isStanza(_ element: XElement) -> Bool {
        ["message", "presence", "iq"].contains(element.name)
    }

    private mutating func receivedNonza(_ element: XElement) -> [Action] {
        let nonza: StreamManagementNonza?
        do {
            nonza = try StreamManagementNonza(element: element)
        } catch {
            return fail(.protocolViolation(error.description), condition: .invalidXML)
        }
        switch nonza {
        case .requestAck:
            return streamManagement.map { [.sendNonza($0.ack)] } ?? []
        case .ack(let h):
            guard streamManagement != nil else { return [] }
            do {
                let confirmed = try streamManagement!.acknowledged(h: h)
                return confirmed.isEmpty ? [] : [.acknowledged(confirmed)]
            } catch {
                return failHandledCountTooHigh(error)
            }
        default:
            return fail(.protocolViolation("unexpected <\(element.name)> while connected"), condition: .undefinedCondition)
        }
    }

    /// XEP-0198 §4: an `h` beyond what we sent is `undefined-condition` with `<handled-count-too-high/>`.
    mutating func failHandledCountTooHigh(_ error: StreamManagementError) -> [Action] {
        state = .finished
        return [
            .sendStreamError(StreamError(condition: .undefinedCondition, text: error.description),
                             applicationCondition: XElement("handled-count-too-high", namespace: XMPPNamespace.streamManagement)),
            .sendStreamEnd, .disconnect(.streamManagement(error)),
        ]
    }

    /// Sends a stream error and closes.
    mutating func fail(_ error: ClientError, condition: StreamErrorCondition, text: String? = nil) -> [Action] {
        state = .finished
        return [.sendStreamError(StreamError(condition: condition, text: text)), .sendStreamEnd, .disconnect(error)]
    }

    /// Closes without a stream error: the server did nothing wrong, we will not go on (no TLS, SASL refused).
    mutating func abort(_ error: ClientError) -> [Action] {
        state = .finished
        return [.sendStreamEnd, .disconnect(error)]
    }
}
