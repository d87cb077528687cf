import IsthmusCommon
import XMPP
import XMPPClient
import XMPPComponent

extension SessionXMPPLink {
    /// The connection's events as ``XMPPLinkEvent``s, each with its receipt in client mode, translated lazily by
    /// whoever iterates.
    public struct Events: AsyncSequence, Sendable {
        public typealias Element = XMPPLinkArrival
        public typealias Failure = Never

        /// Whose stream it is.
        enum Source: Sendable {
            case component(AsyncStream<ComponentEvent>)
            /// The account's events, and its connection, which the receipts of its stanzas tell.
            case client(AsyncStream<ClientEvent>, ClientConnection)
        }

        let source: Source
        let primaryOccupant: JID?
        /// Answers the IQ requests addressed to our JIDs as they pass (vCards, pings, errors); none reach the bridge.
        let responder: ComponentIQResponder?
        /// Gateway mode: the component's domain, under which `#…` addresses are rooms the bridge hosts.
        var gatewayDomain: String?

        public func makeAsyncIterator() -> Iterator {
            switch source {
            case .component(let stream):
                Iterator(component: stream.makeAsyncIterator(), primaryOccupant: primaryOccupant, responder: responder,
                         gatewayDomain: gatewayDomain)
            case .client(let stream, let connection):
                Iterator(client: stream.makeAsyncIterator(), clientConnection: connection, primaryOccupant: primaryOccupant,
                         responder: responder)
            }
        }

        /// A connection event of either kind, as far as the bridge cares.
        enum SessionEvent {
            case connected(reconnected: Bool)
            case disconnected(reason: String)
            /// With the ticket that counts it as handled (client mode).
            case stanza(Stanza, InboundTicket?)
            case session(XMPPSessionChange)
            /// Of the connection only (acks, a new salted password).
            case none
        }

        public struct Iterator: AsyncIteratorProtocol {
            var component: AsyncStream<ComponentEvent>.Iterator?
            var client: AsyncStream<ClientEvent>.Iterator?
            var clientConnection: ClientConnection?
            let primaryOccupant: JID?
            let responder: ComponentIQResponder?
            var gatewayDomain: String?
            /// The client was connected before (a later connection is a reconnect).
            var clientWasConnected = false

            public mutating func next() async -> XMPPLinkArrival? {
                await next(isolation: nil)
            }

            /// The next event for the bridge. A stanza that becomes none (an IQ request answered here, a copy for
            /// another occupant, what is not about a room) counts as handled at once; the others carry their receipt.
            public mutating func next(isolation actor: isolated (any Actor)?) async -> XMPPLinkArrival? {
                while let event = await nextSessionEvent(isolation: actor) {
                    var receipt: XMPPReceipt?
                    if case .stanza(let stanza, let ticket) = event {
                        if let clientConnection, let ticket { receipt = XMPPReceipt { await clientConnection.handled(ticket) } }
                        if isForGatewayRoom(stanza) { return XMPPLinkArrival(.gateway(stanza), receipt: receipt) }
                        if case .iq(let iq) = stanza, iq.isRequest {
                            await responder?.answer(iq)   // no network wait: the answer is written, not awaited
                            await receipt?.handled()
                            continue
                        }
                    }
                    if let translated = translate(event) { return XMPPLinkArrival(translated, receipt: receipt) }
                    await receipt?.handled()
                }
                return nil
            }

            private mutating func nextSessionEvent(isolation actor: isolated (any Actor)?) async -> SessionEvent? {
                if component != nil {
                    switch await component!.next(isolation: actor) {
                    case nil: return nil
                    case .connected(let reconnected)?: return .connected(reconnected: reconnected)
                    case .disconnected(let error)?: return .disconnected(reason: error.description)
                    case .stanza(let stanza)?: return .stanza(stanza, nil)
                    }
                }
                guard client != nil else { return nil }
                switch await client!.next(isolation: actor) {
                case nil:
                    return nil
                case .connected?:
                    // A resumed session kept the room occupancy; the rooms' (re)activation then finds every join
                    // answered at once and catches up what the archive holds beyond the last stanza handled.
                    defer { clientWasConnected = true }
                    return .connected(reconnected: clientWasConnected)
                case .disconnected(let error)?:
                    return .disconnected(reason: error.description)
                case .stanza(let stanza, let ticket)?:
                    return .stanza(stanza, ticket)
                case .resumed(let resent)?:
                    return .session(.resumed(resent: resent))
                case .resumeFailed(let unknown)?:
                    return .session(.resumeFailed(unknown: unknown.count))
                case .acknowledged?, .authenticated?:
                    return SessionEvent.none
                }
            }

            /// One connection event in the bridge's terms; nil for what the bridge does not act on.
            func translate(_ event: SessionEvent) -> XMPPLinkEvent? {
                switch event {
                case .connected(let reconnected):
                    return .connected(reconnected: reconnected)
                case .disconnected(let reason):
                    return .disconnected(reason: reason)
                case .session(let change):
                    return .session(change)
                case .stanza(.message(let message), _):
                    // Invitations are addressed to a puppet's JID, never to our own occupant: read before that filter.
                    if let invite = SessionXMPPLink.roomInvite(message) { return .invite(invite) }
                    // A private message is addressed to one occupant alone: never another's copy.
                    if message.type != .error, message.type != .chat, isOtherOccupantsCopy(to: message.to) { return nil }
                    if message.type == .chat { return SessionXMPPLink.privateMessage(message).map(XMPPLinkEvent.privateMessage) }
                    if let bounced = SessionXMPPLink.privateMessageError(message) { return .privateMessage(bounced) }
                    return SessionXMPPLink.roomMessage(message).map(XMPPLinkEvent.message)
                case .stanza(.presence(let presence), _) where presence.type == .subscribe:
                    // RFC 6121 §3.1.3: only the account is asked (a component's JIDs have no roster here).
                    guard client != nil, let from = presence.from else { return nil }
                    return .subscriptionRequest(from: from.bare)
                case .stanza(.presence(let presence), _):

                    if isOtherOccupantsCopy(to: presence.to) { return nil }
                    return SessionXMPPLink.roomPresence(presence).map(XMPPLinkEvent.presence)
                case .stanza(.iq, _), .none:
                    return nil
                }
            }

            /// Whether `stanza` is addressed to a room the component hosts (`#…@gatewayDomain`, any resource), or asks the
            /// service for its rooms.
            private func isForGatewayRoom(_ stanza: Stanza) -> Bool {
                guard let gatewayDomain else { return false }
                let to: JID? = switch stanza {
                case .message(let message): message.to
                case .presence(let presence): presence.to
                case .iq(let iq): iq.isRequest ? iq.to : nil
                }
                guard let to, to.domain == gatewayDomain else { return false }
                if let localpart = to.localpart { return localpart.hasPrefix("#") }
                // The service itself: its disco#info and its room list (disco#items) are the gateway's.
                guard case .iq(let iq) = stanza, to.resource == nil else { return false }
                switch iq.payload {
                case .discoInfo?: return true
                case .other(let query)? where query.name == "query"
                    && (query.namespace == XMPPNamespace.discoItems || query.namespace == XMPPNamespace.search): return true
                default: return false
                }
            }

            /// Whether a copy addressed to `to` is one for another of our occupants, which the bridge ignores.
            private func isOtherOccupantsCopy(to: JID?) -> Bool {
                guard let primaryOccupant, let to else { return false }
                return to != primaryOccupant
            }
        }
    }
}
