import IsthmusCommon
import Network
import XMLStream
import XMPP

/// One connection's life: connect, read and parse, tick the timers, perform the machine's actions. On the actor.
extension ClientConnection {
    /// Runs one TCP connection to its end; returns whether it was established and why it ended (nil: closed on
    /// request or cancelled).
    func runLink() async -> (established: Bool, error: ClientError?) {
        let host = configuration.host, port = configuration.port
        let socket: TCPConnection
        do throws(NetworkError) {
            socket = try await TCPConnection.connect(host: host, port: port, timeout: configuration.connectTimeout)
        } catch {
            return (false, .connectionLost("\(host):\(port): \(error)"))
        }
        if closeRequested || Task.isCancelled {
            socket.abort()
            return (false, nil)
        }
        linkCount += 1
        let machine = ClientStateMachine(configuration: configuration.stream, resuming: resumption)
        let link = ClientLink(number: linkCount, socket: socket, machine: machine, parserLimits: configuration.parserLimits)
        self.link = link
        logger.debug("Connected to the XMPP server's client port", metadata: ["xmpp.server": "\(host):\(port)"])
        perform(link.machine.connectionOpened(now: configuration.timeSource.now()), on: link)
        let number = link.number
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.readLoop(socket, link: number) }
            group.addTask { await self.tickLoop(link: number) }
            await group.waitForAll()
        }
        self.link = nil
        socket.abort()
        return (link.established, link.error)
    }

    private func readLoop(_ socket: TCPConnection, link number: Int) async {
        var reason: String?
        do {
            for try await chunk in socket.inbound { received(chunk, link: number) }
        } catch {
            reason = "\(error)"
        }
        guard let link, link.number == number, !link.finished else { return }
        if Task.isCancelled {
            // A crash or a stop without close: the socket drops, the stream is not closed, the session stays resumable.
            link.finished = true
            socket.abort()
            return
        }
        perform(link.machine.connectionClosed(reason: reason), on: link)
    }

    private func tickLoop(link number: Int) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: configuration.tickInterval)
            guard let link, link.number == number, !link.finished else { return }
            perform(link.machine.tick(now: configuration.timeSource.now()), on: link)
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
            guard !link.finished, !link.parserResetPending else { break }
            perform(link.machine.received(event, now: now), on: link)
        }
        link.events.removeAll(keepingCapacity: true)
        if link.parserResetPending {
            // The stream restarted: the server waits for our new header, so nothing after the old stream's last
            // element belongs to the new one.
            link.parser = XMLStreamParser(limits: link.parserLimits)
            link.parserResetPending = false
        } else if let refusal, !link.finished {
            logger.warning("The XMPP server sent XML we refuse", metadata: ["xmpp.error": refusal.description])
            perform(link.machine.parseFailed(refusal), on: link)
        }
    }

    /// Performs the machine's actions in order: the only place this actor writes to the socket.
    func perform(_ actions: [ClientStateMachine.Action], on link: ClientLink) {
        for action in actions {
            switch action {
            case .sendStreamHeader(let to):
                write(XMLSerializer.streamStart(namespace: XMPPNamespace.streams, contentNamespace: XMPPNamespace.client,
                                                attributes: ["to": to, "version": "1.0"]), on: link)
            case .resetParser:
                link.parserResetPending = true
            case .startTLS:
                // TLS over this socket is the next step (Network's TLSStream); until then the link ends here, before
                // any credential is sent.
                link.finished = true
                link.error = .tlsUnavailable
                link.socket.close()
            case .sendElement(let element):
                write(XMLSerializer.bytes(of: element, defaultNamespace: XMPPNamespace.client), on: link)
            case .send(let stanza):
                // The stanza model writes its elements in the component namespace; taken as the default here, it is
                // left out on the wire, where the client stream's `jabber:client` applies.
                write(XMLSerializer.bytes(of: stanza.element, defaultNamespace: XMPPNamespace.component), on: link)
            case .sendNonza(let nonza):
                write(XMLSerializer.bytes(of: nonza.element, defaultNamespace: XMPPNamespace.client), on: link)
            case .sendStreamError(let error, let condition):
                var element = error.element
                if let condition { element.append(condition) }
                write(XMLSerializer.bytes(of: element, defaultNamespace: XMPPNamespace.client, prefixes: ["stream": XMPPNamespace.streams]),
                      on: link)
            case .sendStreamEnd:
                write(XMLSerializer.streamEnd(), on: link)
            case .authenticated(let salted):
                if let salted { eventSink.yield(.authenticated(saltedPassword: salted)) }
            case .bound(let jid):
                logger.debug("Bound a resource on the XMPP server", metadata: ["xmpp.jid": jid.description])
            case .resumed(let resend):
                link.resumed = true
                logger.info("Resumed the XMPP session", metadata: ["xmpp.resent": String(resend.count)])
            case .resumeFailed(let unknown):
                logger.notice("The XMPP server no longer holds the session; starting a new one",
                              metadata: ["xmpp.unacknowledged": String(unknown.count)])
                eventSink.yield(.resumeFailed(unknown: unknown))
            case .acknowledged(let stanzas):
                eventSink.yield(.acknowledged(stanzas))
            case .established(let jid):
                link.established = true
                logger.info("Connected to the XMPP server as a client", metadata: ["xmpp.jid": jid.description, "xmpp.resumed": "\(link.resumed)"])
                eventSink.yield(.connected(jid, resumed: link.resumed))
            case .deliver(let stanza):
                eventSink.yield(.stanza(stanza))
            case .dropMalformed(let element, let error):
                logger.warning("Dropped a malformed stanza from the XMPP server",
                               metadata: ["xmpp.error": error.description, "xmpp.element": element.name])
            case .disconnect(let error):
                link.finished = true
                link.error = error
                link.socket.close()
                if let error {
                    logger.warning("Disconnected from the XMPP server", metadata: ["xmpp.error": error.description])
                } else {
                    logger.info("Closed the XMPP client stream")
                }
            }
        }
        keepResumption(link)
    }

    private func write(_ bytes: [UInt8], on link: ClientLink) {
        do {
            try link.socket.write(bytes)
        } catch {
            // The read loop sees the end of the connection and reports it.
            logger.debug("Could not write to the XMPP server", metadata: ["xmpp.error": error.description])
        }
    }
}
