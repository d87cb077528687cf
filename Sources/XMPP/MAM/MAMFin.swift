import XMLStream

/// The end of one page of a XEP-0313 query (§4.2): `<fin complete='true|false' stable='…'><set>…</set></fin>`.
public struct MAMFin: Sendable, Hashable {
    /// True when this page reaches the end of the requested range.
    public var complete: Bool
    /// False when the archive may still change the results (XEP-0313 §4.3.3); nil when unsaid.
    public var stable: Bool?
    /// The page: `first`/`last` archive ids and maybe the total `count`.
    public var rsm: RSMSet?

    public init(complete: Bool, stable: Bool? = nil, rsm: RSMSet? = nil) {
        self.complete = complete
        self.stable = stable
        self.rsm = rsm
    }

    /// Reads the element; throws when it is not this one or lacks what the spec requires.
    public init(element: XElement) throws(StanzaParseError) {
        try element.expect("fin", XMPPNamespace.mam)
        complete = element[attribute: "complete"].map { $0 == "true" || $0 == "1" } ?? false
        stable = element[attribute: "stable"].map { $0 == "true" || $0 == "1" }
        rsm = try element.child("set", namespace: XMPPNamespace.rsm).map { element throws(StanzaParseError) in try RSMSet(element: element) }
    }

    /// The element, ready to serialize.
    public var element: XElement {
        XElement("fin", namespace: XMPPNamespace.mam, [
            "complete": complete ? "true" : nil, "stable": stable.map { $0 ? "true" : "false" },
        ], children: rsm.map { [.element($0.element)] } ?? [])
    }
}
