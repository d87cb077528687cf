import FoundationEssentials
import IsthmusCommon
import XMLStream

/// XEP-0313 archive catch-up on a room. On the session's actor.
extension StanzaSession {
    /// Fetches `room`'s archived messages after the stanza id `after` — or, when no id is known, since `since` —
    /// asking as `querier` (one of our occupants' real JIDs; rooms may only show their archive to occupants).
    /// Pages with RSM (XEP-0059) until the room answers `<fin complete='true'>`. Results come oldest first, as typed
    /// messages with delay stamps and the room's stanza ids; they are not delivered to ``events``.
    ///
    /// With `after`, the room's disco#info is read first: where it announces `urn:xmpp:mam:2#extended` the id goes
    /// in the `after-id` filter (XEP-0313 §4.1.1); elsewhere (ejabberd 23.01, which refuses the field with
    /// `bad-request`) it is the RSM `<after>` of the first page — an archive's ids are its RSM item ids (XEP-0313 §5),
    /// so over the whole archive both ask for the same messages.
    ///
    /// - Parameter maxPages: a bound against runaway archives (nil: none).
    /// - Throws: ``XMPPRequestError/requestFailed(_:)`` when the room refuses (e.g. `item-not-found` for an unknown
    ///   `after` id — fall back to `since`), timeouts and connection errors, `CancellationError`.
    package func mamQuery(
        room: JID, as querier: JID, after: StanzaID? = nil, since: Date? = nil, pageSize: Int = 100,
        maxPages: Int? = nil, timeout: Duration? = nil
    ) async throws -> [ArchivedMessage] {
        let archive = room.bare
        var results: [ArchivedMessage] = []
        var afterByFilter = false
        var pageAfter: String?
        if let after {
            afterByFilter = try await discoInfo(of: archive, as: querier, timeout: timeout).supportsMAMExtended
            if !afterByFilter { pageAfter = after.rawValue }
        }
        var pages = 0
        while true {
            let queryID = StanzaAttributeID.random().rawValue
            let query = MAMQuery(
                queryID: queryID, start: after == nil ? since : nil, afterID: afterByFilter ? after : nil,
                rsm: RSMSet(max: pageSize, after: pageAfter))
            mamCollectors[queryID] = MAMCollector(archive: archive, querier: querier)
            defer { mamCollectors[queryID] = nil }
            let response = try await sendIQ(IQ(type: .set, from: querier, to: archive, payload: .mamQuery(query)), timeout: timeout)
            if response.type == .error {
                throw XMPPRequestError.requestFailed(response.error ?? StanzaError(type: .cancel, condition: .undefinedCondition))
            }
            guard case .mamFin(let fin)? = response.payload else {
                throw XMPPRequestError.unexpectedResponse("MAM query result without <fin> from \(archive)")
            }
            let page = mamCollectors[queryID]?.messages ?? []
            results += page
            pages += 1
            sessionLogger.debug("Fetched a page of a room archive", metadata: [
                "xmpp.room": archive.description, "xmpp.mam.page": String(pages), "xmpp.mam.count": String(page.count),
            ])
            guard !fin.complete, !page.isEmpty, let last = fin.rsm?.last, maxPages.map({ pages < $0 }) ?? true else { break }
            pageAfter = last
        }
        return results
    }

    /// Takes a MAM result addressed to a running query's querier from that query's archive; returns whether the
    /// message was one (it is then not delivered to ``events``).
    package func collectArchived(_ message: Message) -> Bool {
        guard let result = message.extensionElement("result", namespace: XMPPNamespace.mam),
              let queryID = result[attribute: "queryid"], var collector = mamCollectors[queryID],
              message.from == collector.archive, message.to == collector.querier else { return false }
        do {
            if let archived = try ArchivedMessage(envelope: message, archive: collector.archive) {
                collector.messages.append(archived)
                mamCollectors[queryID] = collector
            }
        } catch {
            sessionLogger.warning("Dropped a malformed archived message", metadata: [
                "xmpp.room": collector.archive.description, "xmpp.error": error.description,
            ])
        }
        return true
    }
}
