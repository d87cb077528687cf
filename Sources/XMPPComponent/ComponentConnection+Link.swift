import IsthmusCommon
import Network
import XMLStream

/// One connection's life: connect, read and parse, tick the timers, perform the state machine's actions, route
/// what arrives. All on the ``ComponentConnection`` actor.
extension ComponentConnection {
    /// Runs one TCP connection to its end; returns whether the handshake succeeded and why it ended (nil: closed
    /// on request or cancelled). Every waiter still pending then fails.
    func runLink(reconnected: Bool) async -> (established: Bool, error: ComponentError?) {
        let host = configuration.host, port = configuration.port
        let socket: TCPConnection
        do throws(NetworkError) {
            socket = try await TCPConnection.connect(host: host, port: port, timeout: configuration.connectTimeout)
        } catch {
            return (false, ComponentError(error, host: host, port: port))
        }
        if closeRequested || Task.isCancelled {
            socket.abort()
            return (false, nil)
        }
        linkCount += 1
        let link = ComponentLink(number: linkCount, socket: socket, configuration: configuration, reconnected: reconnected)
        self.link = link
        logger.debug("Connected to the XMPP server's component port", metadata: ["xmpp.server": "\(host):\(port)"])
        perform(link.machine.connectionOpened(now: configuration.timeSource.now()), on: link)
        let number = link.number
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.readLoop(socket, link: number) }
            group.addTask { await self.tickLoop(link: number) }
            await group.waitForAll()
        }
        self.link = nil
        socket.abort()
        let ended = link.error ?? ComponentError.notConnected
        failPendingRequests(with: ended)
        return (link.established, link.error)
    }

    /// Feeds everything the socket delivers to the parser and the state machine, in order, until the socket ends.
    private func readLoop(_ socket: TCPConnection, link number: Int) async {
        var reason: String?
        do {
            for try await chunk in socket.inbound {
                // Paused: this chunk waits here and the ones after it in the socket (TCPConnection stops reading
                // past its limit), so the server's data is held, not lost.
                while readingPaused, !Task.isCancelled {
                    try? await Task.sleep(for: configuration.tickInterval)
                }
                received(chunk, link: number)
            }
        } catch {
            reason = "\(error)"
        }
        guard let link, link.number == number, !link.finished else { return }
        if Task.isCancelled {
            link.finished = true
            socket.abort()
            return
        }
        perform(link.machine.connectionClosed(reason: reason), on: link)
    }

    /// Ticks the state machine and the request deadlines until the link finishes.
    private func tickLoop(link number: Int) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.tickInterval)
            guard let link, link.number == number, !link.finished else { return }
            if readingPaused { continue }   // no keepalive verdict while we are not reading the answers
            let now = configuration.timeSource.now()
            perform(link.machine.tick(now: now), on: link)
            expireRequests(now: now)
        }
    }

    private func received(_ chunk: [UInt8], link number: Int) {
        guard let link, link.number == number, !link.finished else { return }
        let now = configuration.timeSource.now()
        link.machine.bytesReceived(now: now)
        var refusal: XMLStreamError?
        do {
            try link.parser.feed(chunk, into: &link.events)
        } catch {
            refusal = error
        }
        for event in link.events {
            guard !link.finished else { break }
            if link.established, let primary = configuration.primaryOccupant, case .element(let element) = event,
               isUnwatchedOccupantCopy(element, primary: primary) {
                continue   // another occupant's copy: nothing reads it (ComponentConfiguration.primaryOccupant)
            }
            perform(link.machine.received(event, now: now), on: link)
        }
        link.events.removeAll(keepingCapacity: true)
        if let refusal, !link.finished {
            logger.warning("The XMPP server sent XML we refuse", metadata: ["xmpp.error": refusal.description])
            perform(link.machine.parseFailed(refusal), on: link)
        }
    }

    /// Performs the state machine's actions in order: the only place this actor writes to the socket for the protocol.
    func perform(_ actions: [ComponentStateMachine.Action], on link: ComponentLink) {
        for action in actions {
            switch action {
            case .sendStreamHeader(let to):
                write(XMLSerializer.streamStart(
                    namespace: XMPPNamespace.streams, contentNamespace: XMPPNamespace.component, attributes: ["to": to]), on: link)
            case .sendHandshake(let digest):
                write(XMLSerializer.bytes(of: XElement("handshake", namespace: XMPPNamespace.component, children: [.text(digest)])), on: link)
            case .send(let stanza):
                write(XMLSerializer.bytes(of: stanza.element), on: link)
            case .sendStreamError(let error):
                write(XMLSerializer.bytes(
                    of: error.element, defaultNamespace: XMPPNamespace.component, prefixes: ["stream": XMPPNamespace.streams]), on: link)
            case .sendStreamEnd:
                write(XMLSerializer.streamEnd(), on: link)
            case .established:
                link.established = true
                logger.info("Connected to the XMPP server as a component", metadata: ["xmpp.reconnected": "\(link.reconnected)"])
                eventSink.yield(.connected(reconnected: link.reconnected))
            case .deliver(let stanza):
                route(stanza)
            case .dropMalformed(let element, let error):
                logger.warning("Dropped a malformed stanza from the XMPP server",
                               metadata: ["xmpp.error": error.description, "xmpp.element": element.name])
            case .disconnect(let error):
                link.finished = true
                link.error = error
                link.socket.close()
                if let error {
                    logger.log(Self.isConfigurationProblem(error) ? .error : .warning, "Disconnected from the XMPP server",
                               metadata: ["xmpp.error": error.description])
                } else {
                    logger.info("Closed the XMPP component stream")
                }
            }
        }
    }

    private func write(_ bytes: [UInt8], on link: ComponentLink) {
        do {
            try link.socket.write(bytes)
        } catch {
            // The read loop sees the end of the connection and reports it.
            logger.debug("Could not write to the XMPP server", metadata: ["xmpp.error": error.description])
        }
    }

    /// Hands a stanza to the request waiting for it, or else to the bridge.
    private func route(_ stanza: Stanza) {
        if routeAnswer(stanza) { return }
        eventSink.yield(.stanza(stanza))
    }
}

extension ComponentError {
    /// The component error a socket failure means.
    init(_ error: NetworkError, host: String, port: Int) {
        switch error {
        case .connectionRefused: self = .connectionRefused(host: host, port: port)
        case .connectTimedOut: self = .timeout(.connect)
        default: self = .connectionFailed(host: host, port: port, reason: error.description)
        }
    }
}
