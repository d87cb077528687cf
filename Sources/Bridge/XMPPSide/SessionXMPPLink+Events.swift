import IsthmusCommon
import XMPP
import XMPPClient
import XMPPComponent

extension SessionXMPPLink {
    /// The connection's events as ``XMPPLinkEvent``s, translated lazily by whoever iterates.
    public struct Events: AsyncSequence, Sendable {
        public typealias Element = XMPPLinkEvent
        public typealias Failure = Never

        /// Whose stream it is.
        enum Source: Sendable {
            case component(AsyncStream<ComponentEvent>)
            /// The account's events, and its connection to count each stanza as handled once taken.
            case client(AsyncStream<ClientEvent>, ClientConnection)
        }

        let source: Source
        let primaryOccupant: JID?
        /// Answers the IQ requests addressed to our JIDs as they pass (vCards, pings, errors); none reach the bridge.
        let responder: ComponentIQResponder?

        public func makeAsyncIterator() -> Iterator {
            switch source {
            case .component(let stream):
                Iterator(component: stream.makeAsyncIterator(), primaryOccupant: primaryOccupant, responder: responder)
            case .client(let stream, let connection):
                Iterator(client: stream.makeAsyncIterator(), clientConnection: connection, primaryOccupant: primaryOccupant,
                         responder: responder)
            }
        }

        /// A connection event of either kind, as far as the bridge cares.
        enum SessionEvent {
            case connected(reconnected: Bool)
            case disconnected(reason: String)
            case stanza(Stanza)
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
            /// The client was connected before (a later connection is a reconnect).
            var clientWasConnected = false

            public mutating func next() async -> XMPPLinkEvent? {
                await next(isolation: nil)
            }

            public mutating func next(isolation actor: isolated (any Actor)?) async -> XMPPLinkEvent? {
                while let event = await nextSessionEvent(isolation: actor) {
                    if case .stanza(let stanza) = event {
                        // Taken is handled, for now: durable handling (the count in the store with the effects) is to come.
                        await clientConnection?.handled()
                        if case .iq(let iq) = stanza, iq.isRequest {
                            await responder?.answer(iq)   // no network wait: the answer is written, not awaited
                            continue
                        }
                    }
                    if let translated = translate(event) { return translated }
                }
                return nil
            }

            private mutating func nextSessionEvent(isolation actor: isolated (any Actor)?) async -> SessionEvent? {
                if component != nil {
                    switch await component!.next(isolation: actor) {
                    case nil: return nil
                    case .connected(let reconnected)?: return .connected(reconnected: reconnected)
                    case .disconnected(let error)?: return .disconnected(reason: error.description)
                    case .stanza(let stanza)?: return .stanza(stanza)
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
                case .stanza(let stanza)?:
                    return .stanza(stanza)
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
                case .stanza(.message(let message)):
                    // Invitations are addressed to a puppet's JID, never to our own occupant: read before that filter.
                    if let invite = SessionXMPPLink.roomInvite(message) { return .invite(invite) }
                    // A private message is addressed to one occupant alone: never another's copy.
                    if message.type != .error, message.type != .chat, isOtherOccupantsCopy(to: message.to) { return nil }
                    if message.type == .chat { return SessionXMPPLink.privateMessage(message).map(XMPPLinkEvent.privateMessage) }
                    if let bounced = SessionXMPPLink.privateMessageError(message) { return .privateMessage(bounced) }
                    return SessionXMPPLink.roomMessage(message).map(XMPPLinkEvent.message)
                case .stanza(.presence(let presence)):
                    if isOtherOccupantsCopy(to: presence.to) { return nil }
                    return SessionXMPPLink.roomPresence(presence).map(XMPPLinkEvent.presence)
                case .stanza(.iq), .none:
                    return nil
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
