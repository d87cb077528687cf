import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import XMLStream
import XMPP
import XMPPClient

/// Client mode's XEP-0198 session in the bridge's store (`xmpp_sessions`), for the account: what the connection
/// resumes after a restart. Stanzas are kept as their XML.
struct StoreClientSessionKeeper: ClientSessionKeeper {
    let store: Store
    let account: JID

    func keep(_ resumption: ClientStateMachine.Resumption?) async throws {
        try await store.saveXMPPSession(resumption.flatMap(Self.stored), account: account)
    }

    /// The session kept for the account, if any and readable.
    public func load() async throws -> ClientStateMachine.Resumption? {
        try await store.xmppSession(account: account).flatMap(Self.resumption)
    }

    static func stored(_ resumption: ClientStateMachine.Resumption) -> StoredXMPPSession? {
        let sm = resumption.streamManagement
        guard let id = sm.sessionID else { return nil }
        return StoredXMPPSession(jid: resumption.jid, sessionID: id, location: sm.location, inboundHandled: sm.inboundHandled,
                                 outboundAcknowledged: sm.outboundAcknowledged,
                                 unacknowledged: sm.unacknowledged.map { XMLSerializer.string(of: $0.element) })
    }

    /// The stored session as the connection resumes it; nil when a kept stanza no longer parses (a new session then
    /// starts: the rooms' archives stand in for what was unacknowledged).
    static func resumption(_ stored: StoredXMPPSession) -> ClientStateMachine.Resumption? {
        var stanzas: [Stanza] = []
        for xml in stored.unacknowledged {
            guard let stanza = parse(xml) else { return nil }
            stanzas.append(stanza)
        }
        let sm = StreamManagement<Stanza>(sessionID: stored.sessionID, location: stored.location, inboundHandled: stored.inboundHandled,
                                          outboundAcknowledged: stored.outboundAcknowledged, unacknowledged: stanzas)
        return ClientStateMachine.Resumption(streamManagement: sm, jid: stored.jid)
    }

    /// One stanza from its XML, read as the stream reads it.
    static func parse(_ xml: String) -> Stanza? {
        let parser = XMLStreamParser()
        let open = XMLSerializer.streamStart(namespace: XMPPNamespace.streams, contentNamespace: XMPPNamespace.component, attributes: [:])
        guard let events = try? parser.feed(open + Array(xml.utf8)) else { return nil }
        for case .element(let element) in events { return try? Stanza(element: element) }
        return nil
    }
}
