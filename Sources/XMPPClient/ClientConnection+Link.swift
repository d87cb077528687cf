import IsthmusCommon
import Network
import XMLStream
import XMPP

/// One connection's life: connect, read and parse, tick the timers, perform the machine's actions. On the actor.
extension ClientConnection {
    /// Runs one TCP connection to its end; returns whether it was established and why it ended (nil: closed on
    /// request or cancelled).
    func runLink() async -> (established: Bool, error: ClientError?) {
        let socket: TCPConnection, endpoint: ServerEndpoint
        do throws(ClientError) {
            (socket, endpoint) = try await connectToServer()
        } catch {
            return (false, error)
        }
        if closeRequested || Task.isCancelled {
            socket.abort()
            return (false, nil)
        }
        linkCount += 1
        let machine = ClientStateMachine(configuration: configuration.stream, resuming: resumption, credentials: credentials)
        let link = ClientLink(number: linkCount, socket: socket, machine: machine, parserLimits: configuration.parserLimits)
        self.link = link
        inbound.reset(link: link.number)
        var plaintext: PlaintextReader? = PlaintextReader(iterator: socket.inbound.makeAsyncIterator())
        var directTLS: ClientStateMachine.TLS?
        if endpoint.directTLS {
            do {
                directTLS = try await startTLS(on: link, continuing: plaintext.take()!)
            } catch {
                self.link = nil
                socket.abort()
                return (false, error)
            }
        }
        perform(link.machine.connectionOpened(now: configuration.timeSource.now(), directTLS: directTLS), on: link)
        let number = link.number
        let reader = plaintext
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.readLoop(socket, plaintext: reader, link: number) }
            group.addTask { await self.tickLoop(link: number) }
            await group.waitForAll()
        }
        self.link = nil
        socket.abort()
        failPendingRequests(with: link.error ?? ClientError.notConnected)
        return (link.established, link.error)
    }

    /// Reads the socket (plaintext until TLS, then through it) until it ends, doing the STARTTLS handshake when the
    /// machine asks for it: before any byte after `<proceed/>` is read.
    private func readLoop(_ socket: TCPConnection, plaintext: PlaintextReader?, link number: Int) async {
        var plaintext = plaintext
        var reason: String?
        do {
            while let chunk = try await nextChunk(&plaintext, link: number) {
                // Paused: this chunk waits here and the rest in the socket, held rather than lost.
                while readingPaused, !Task.isCancelled {
                    try? await Task.sleep(for: configuration.tickInterval)
                }
                received(chunk, link: number)
                guard let link, link.number == number, !link.finished else { return }
                if link.tlsRequested, let iterator = plaintext.take() {
                    link.tlsRequested = false
                    do {
                        let tls = try await startTLS(on: link, continuing: iterator)
                        perform(link.machine.tlsEstablished(tls), on: link)
                    } catch {
                        link.finished = true
                        link.error = error
                        socket.abort()
                        logger.warning("Disconnected from the XMPP server", metadata: ["xmpp.error": error.description])
                        return
                    }
                }
            }
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

    /// The next bytes from the server: from TLS once it is up, else from the plaintext socket.
    private func nextChunk(_ plaintext: inout PlaintextReader?, link number: Int) async throws -> [UInt8]? {
        if let tls = link?.tls, link?.number == number { return try await tls.next() }
        guard var reader = plaintext else { return nil }
        let chunk = try await reader.iterator.next()
        plaintext = reader
        return chunk
    }

    /// The TLS handshake on this link's socket (SNI and the certificate check for the account's domain, ALPN
    /// `xmpp-client`), and what SASL needs to know of the channel.
    private func startTLS(on link: ClientLink, continuing plaintext: PlaintextReader) async throws(ClientError) -> ClientStateMachine.TLS {
        let domain = configuration.stream.domain
        do {
            let context = try tlsContext()
            let tls = try await TLSStream.connect(over: link.socket, inbound: plaintext.iterator, host: domain, context: context,
                                                  alpn: ["xmpp-client"])
            link.tls = tls
            let exporter = tls.exporterChannelBinding()
            var bindingData: [ChannelBindingType: [UInt8]] = [:]
            bindingData[.tlsExporter] = exporter
            bindingData[.tlsServerEndPoint] = tls.serverEndPointChannelBinding()
            logger.debug("TLS with the XMPP server", metadata: ["tls.version": tls.protocolVersion, "tls.alpn": tls.negotiatedALPN ?? "-"])
            return ClientStateMachine.TLS(channel: .init(exporterUsable: exporter != nil), bindingData: bindingData)
        } catch let error as NetworkError {
            if case .tls(let reason) = error { throw .tlsFailed(reason) }
            throw .connectionLost(error.description)
        } catch {
            throw .connectionLost("\(error)")
        }
    }

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
        restartParserIfAsked(link)   // asked between chunks, e.g. when TLS came up
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
            // The stream restarted within this chunk: the server waits for our new header, so nothing after the old
            // stream's last element belongs to the new one.
            restartParserIfAsked(link)
        } else if let refusal, !link.finished {
            logger.warning("The XMPP server sent XML we refuse", metadata: ["xmpp.error": refusal.description])
            perform(link.machine.parseFailed(refusal), on: link)
        }
    }

    /// A fresh parser for the restarted stream (RFC 6120 §4.3.3), if the machine asked for one.
    private func restartParserIfAsked(_ link: ClientLink) {
        guard link.parserResetPending else { return }
        link.parser = XMLStreamParser(limits: link.parserLimits)
        link.parserResetPending = false
    }

    /// Performs the machine's actions in order: the only place this actor writes to the socket.
    func perform(_ actions: [ClientStateMachine.Action], on link: ClientLink) {
        for action in actions {
            switch action {
            case .sendStreamHeader(let to, let from):
                write(XMLSerializer.streamStart(namespace: XMPPNamespace.streams, contentNamespace: XMPPNamespace.client,
                                                attributes: ["to": to, "from": from?.description, "version": "1.0"]), on: link)
            case .resetParser:
                link.parserResetPending = true
            case .startTLS:
                link.tlsRequested = true   // the read loop does the handshake before reading on
            case .sendElement(let element):
                write(XMLSerializer.bytes(of: element, defaultNamespace: XMPPNamespace.client), on: link)
            case .send(let stanza):
                // The stanza model writes its elements in the component namespace; taken as the default here, it is
                // left out on the wire, where the client stream's `jabber:client` applies.
                write(XMLSerializer.bytes(of: stanza.element, defaultNamespace: XMPPNamespace.component), on: link)
            case .sendNonza(let nonza):
                if case .ack = nonza, link.machine.isConnected {
                    acknowledge(nonza, on: link)
                } else {
                    writeNonza(nonza, on: link)
                }
            case .sendStreamError(let error, let condition):
                var element = error.element
                if let condition { element.append(condition) }
                write(XMLSerializer.bytes(of: element, defaultNamespace: XMPPNamespace.client, prefixes: ["stream": XMPPNamespace.streams]),
                      on: link)
            case .sendStreamEnd:
                write(XMLSerializer.streamEnd(), on: link)
            case .authenticated(let salted):
                if let salted {
                    eventSink.yield(.authenticated(saltedPassword: salted))
                    setCredentials(CredentialCache(saltedPassword: salted, fastToken: credentials.fastToken))
                }
            case .fastToken(let token):
                setCredentials(CredentialCache(saltedPassword: credentials.saltedPassword, fastToken: token))
            case .saltedPasswordRefused:
                setCredentials(CredentialCache(saltedPassword: nil, fastToken: credentials.fastToken))
            case .bound(let jid):
                logger.debug("Bound a resource on the XMPP server", metadata: ["xmpp.jid": jid.description])
            case .resumed(let resend):
                link.resumed = true
                eventSink.yield(.resumed(resent: resend.count))
                logger.info("Resumed the XMPP session", metadata: ["xmpp.resent": String(resend.count)])
            case .resumeFailed(let unknown):
                logger.notice("The XMPP server no longer holds the session; starting a new one",
                              metadata: ["xmpp.unacknowledged": String(unknown.count)])
                eventSink.yield(.resumeFailed(unknown: unknown))
                setResumption(nil)   // the server said it does not hold it: a retry must not ask again
            case .acknowledged(let stanzas):
                eventSink.yield(.acknowledged(stanzas))
                wakeCapacityWaiters()
            case .established(let jid):
                link.established = true
                logger.info("Connected to the XMPP server as a client", metadata: [
                    "xmpp.jid": jid.description, "xmpp.resumed": "\(link.resumed)",
                    "xmpp.login": "\(Negotiated.login(mechanism: link.machine.mechanism, sasl2: link.machine.sasl2))"])
                if !link.resumed {
                    for stanza in configuration.onNewSession {
                        if let sent = try? link.machine.send(stanza) { perform(sent, on: link) }
                    }
                }
                eventSink.yield(.connected(jid, resumed: link.resumed))
            case .deliver(let stanza):
                deliver(stanza)
            case .handledHere:
                _ = inbound.arrived(handled: true)
                countHandledPrefix()
            case .dropMalformed(let element, let error):
                logger.warning("Dropped a malformed stanza from the XMPP server",
                               metadata: ["xmpp.error": error.description, "xmpp.element": element.name])
            case .disconnect(let error):
                link.finished = true
                link.error = error
                link.socket.close()
                wakeCapacityWaiters()
                if error == nil, closeRequested { setResumption(nil) }   // closed: the server ended the session
                if let error {
                    logger.warning("Disconnected from the XMPP server", metadata: ["xmpp.error": error.description])
                } else {
                    logger.info("Closed the XMPP client stream")
                }
            }
        }
        keepResumption(link)
    }

    /// Hands an inbound stanza to the request waiting for it (counted as handled in order) or else to the consumer.
    /// Addressed to the resource the server bound, it reaches both as addressed to ``accountJID``.
    private func deliver(_ stanza: Stanza) {
        var stanza = stanza
        if let to = stanza.to, to.bare == accountJID.bare, to.resource != nil, to != accountJID {
            stanza = stanza.addressed(from: stanza.from, to: accountJID)
        }
        if routeAnswer(stanza) {
            _ = inbound.arrived(handled: true)
            countHandledPrefix()
        } else {
            eventSink.yield(.stanza(stanza, inbound.arrived(handled: false)))
        }
    }

    func writeNonza(_ nonza: StreamManagementNonza, on link: ClientLink) {
        write(XMLSerializer.bytes(of: nonza.element, defaultNamespace: XMPPNamespace.client), on: link)
    }

    private func write(_ bytes: [UInt8], on link: ClientLink) {
        do {
            try link.write(bytes)
        } catch {
            // The read loop sees the end of the connection and reports it.
            logger.debug("Could not write to the XMPP server", metadata: ["xmpp.error": error.description])
        }
    }
}

/// The socket's plaintext reader, handed from the link's start to its read loop and then, at STARTTLS, to the TLS
/// layer. One owner at a time, in sequence (never two tasks reading), which the compiler cannot see through the
/// iterator's non-Sendable type: hence the unchecked box.
struct PlaintextReader: @unchecked Sendable {
    var iterator: TCPInbound.AsyncIterator
}
