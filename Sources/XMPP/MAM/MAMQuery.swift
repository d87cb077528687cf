import FoundationEssentials
import IsthmusCommon
import XMLStream

/// A XEP-0313 query, `<query xmlns='urn:xmpp:mam:2' queryid='…'>` with a filter form (§4.1) and RSM paging (§5).
/// Sent to the archive's JID — for a room, its bare JID.
public struct MAMQuery: Sendable, Hashable {
    /// Echoed in every `<result queryid>` of this query, so results can be told apart.
    public var queryID: String?
    /// Only messages from or to this JID.
    public var with: JID?
    /// Only messages at or after this time (`start`).
    public var start: Date?
    /// Only messages at or before this time (`end`).
    public var end: Date?
    /// Only messages after this archive id (`after-id`, needs `urn:xmpp:mam:2#extended`).
    public var afterID: StanzaID?
    /// Only messages before this archive id (`before-id`, needs `urn:xmpp:mam:2#extended`).
    public var beforeID: StanzaID?
    /// Paging.
    public var rsm: RSMSet?

    public init(
        queryID: String? = nil, with: JID? = nil, start: Date? = nil, end: Date? = nil, afterID: StanzaID? = nil,
        beforeID: StanzaID? = nil, rsm: RSMSet? = nil
    ) {
        self.queryID = queryID
        self.with = with
        self.start = start
        self.end = end
        self.afterID = afterID
        self.beforeID = beforeID
        self.rsm = rsm
    }

    /// Reads the element; throws when it is not this one or lacks what the spec requires.
    public init(element: XElement) throws(StanzaParseError) {
        try element.expect("query", XMPPNamespace.mam)
        queryID = element[attribute: "queryid"]
        if let formElement = element.child("x", namespace: XMPPNamespace.dataForms) {
            let form = try DataForm(element: formElement)
            with = form["with"]?.first.flatMap { JID($0) }
            start = form["start"]?.first.flatMap(XMPPDateTime.parse)
            end = form["end"]?.first.flatMap(XMPPDateTime.parse)
            afterID = form["after-id"]?.first.flatMap { StanzaID($0) }
            beforeID = form["before-id"]?.first.flatMap { StanzaID($0) }
        }
        rsm = try element.child("set", namespace: XMPPNamespace.rsm).map { element throws(StanzaParseError) in try RSMSet(element: element) }
    }

    /// The element, ready to serialize.
    public var element: XElement {
        var query = XElement("query", namespace: XMPPNamespace.mam, ["queryid": queryID])
        var fields = [DataForm.Field("FORM_TYPE", type: "hidden", values: [XMPPNamespace.mam])]
        if let with { fields.append(DataForm.Field("with", values: [with.description])) }
        if let start { fields.append(DataForm.Field("start", values: [XMPPDateTime.format(start)])) }
        if let end { fields.append(DataForm.Field("end", values: [XMPPDateTime.format(end)])) }
        if let afterID { fields.append(DataForm.Field("after-id", values: [afterID.rawValue])) }
        if let beforeID { fields.append(DataForm.Field("before-id", values: [beforeID.rawValue])) }
        query.append(DataForm(type: "submit", fields: fields).element)
        if let rsm { query.append(rsm.element) }
        return query
    }
}
