import IsthmusCommon
import XMLStream

/// One archived message from a XEP-0313 query: `<message><result xmlns='urn:xmpp:mam:2' queryid id><forwarded
/// xmlns='urn:xmpp:forward:0'><delay/><message>…</message></forwarded></result></message>`.
///
/// ``message`` is the same typed model as a live message, completed from the envelope: its ``Message/delay`` is the
/// archive's delay stamp (when the message itself had none), and its ``Message/stanzaIDs`` include the archive id
/// assigned by ``archive`` — so a bridge can handle archived and live messages the same way.
public struct ArchivedMessage: Sendable, Hashable {
    /// The archive id (for a room archive: the room's stanza id of the message).
    public var id: StanzaID
    /// The `queryid` the result answers.
    public var queryID: String?
    /// The archive's JID (the room's bare JID), i.e. the `from` of the result envelope.
    public var archive: JID
    /// The archived message, completed as described above.
    public var message: Message

    public init(id: StanzaID, queryID: String?, archive: JID, message: Message) {
        self.id = id
        self.queryID = queryID
        self.archive = archive
        self.message = message
    }

    /// Reads a result envelope; nil when `envelope` carries no MAM result. `archive` defaults to the envelope's
    /// `from` (a user's own archive sends results without `from`; pass the account's bare JID then).
    public init?(envelope: Message, archive: JID? = nil) throws(StanzaParseError) {
        guard let result = envelope.extensionElement("result", namespace: XMPPNamespace.mam) else { return nil }
        let idText = try result.required("id")
        guard let id = StanzaID(idText) else { throw StanzaParseError(element: "result", .invalidValue(field: "id", value: idText)) }
        guard let archive = archive ?? envelope.from?.bare else {
            throw StanzaParseError(element: "message", .missingAttribute("from"))
        }
        guard let forwarded = result.child("forwarded", namespace: XMPPNamespace.forward),
              let inner = forwarded.child("message", namespace: XMPPNamespace.client)
                ?? forwarded.elements.first(where: { $0.name == "message" }) else {
            throw StanzaParseError(element: "forwarded", .missingAttribute("message"))
        }
        var message = try Message(element: inner)
        if message.delay == nil, let delay = forwarded.child("delay", namespace: XMPPNamespace.delay) {
            message.delay = try? Delay(element: delay)
        }
        if !message.stanzaIDs.contains(where: { $0.by == archive }) {
            message.stanzaIDs.append(AssignedStanzaID(id: id, by: archive))
        }
        self.init(id: id, queryID: result[attribute: "queryid"], archive: archive, message: message)
    }
}
