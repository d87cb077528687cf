import XMLStream

/// XEP-0059 result set management, `<set xmlns='http://jabber.org/protocol/rsm'>`: paging requests (`max`, `after`,
/// `before`) and the page a response holds (`first`, `last`, `count`). For MUC archives, item ids are stanza ids.
public struct RSMSet: Sendable, Hashable {
    /// Request: page size.
    public var max: Int?
    /// Request: the page after this item id.
    public var after: String?
    /// Request: the page before this item id (empty: the last page).
    public var before: String?
    /// Response: the page's first item id.
    public var first: String?
    /// Response: the page's last item id (ask `after` it for the next page).
    public var last: String?
    /// Response: the total number of items, if told.
    public var count: Int?

    public init(max: Int? = nil, after: String? = nil, before: String? = nil, first: String? = nil, last: String? = nil, count: Int? = nil) {
        self.max = max
        self.after = after
        self.before = before
        self.first = first
        self.last = last
        self.count = count
    }

    /// Reads the element; throws when it is not this one or lacks what the spec requires.
    public init(element: XElement) throws(StanzaParseError) {
        try element.expect("set", XMPPNamespace.rsm)
        let ns = XMPPNamespace.rsm
        max = element.childText("max", ns).flatMap { Int($0) }
        after = element.childText("after", ns)
        before = element.childText("before", ns)
        first = element.childText("first", ns)
        last = element.childText("last", ns)
        count = element.childText("count", ns).flatMap { Int($0) }
    }

    /// The element, ready to serialize.
    public var element: XElement {
        var set = XElement("set", namespace: XMPPNamespace.rsm)
        func add(_ name: String, _ value: String?) {
            if let value { set.append(XElement(name, namespace: XMPPNamespace.rsm, children: value.isEmpty ? [] : [.text(value)])) }
        }
        add("max", max.map(String.init))
        add("after", after)
        add("before", before)
        add("first", first)
        add("last", last)
        add("count", count.map(String.init))
        return set
    }
}
