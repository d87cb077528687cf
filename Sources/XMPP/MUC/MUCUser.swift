import XMLStream

/// `<x xmlns='http://jabber.org/protocol/muc#user'>` on presences and messages from a room (XEP-0045): occupant items
/// and status codes. Children other than `item` and `status` (invite, decline, destroy, password…) are kept as elements.
public struct MUCUser: Sendable, Hashable {
    /// Occupant items (one on presences, several in admin lists).
    public var items: [MUCItem]
    /// Status codes in document order, duplicates removed.
    public var statusCodes: [MUCStatusCode]
    /// Other children, preserved.
    public var extensions: [XElement]

    public init(items: [MUCItem] = [], statusCodes: [MUCStatusCode] = [], extensions: [XElement] = []) {
        self.items = items
        self.statusCodes = statusCodes
        self.extensions = extensions
    }

    /// Reads the element; throws when it is not this one or lacks what the spec requires.
    public init(element: XElement) throws(StanzaParseError) {
        try element.expect("x", XMPPNamespace.mucUser)
        items = []
        statusCodes = []
        extensions = []
        for child in element.elements {
            switch (child.name, child.namespace) {
            case ("item", XMPPNamespace.mucUser):
                items.append(try MUCItem(element: child))
            case ("status", XMPPNamespace.mucUser):
                let text = try child.required("code")
                guard let code = Int(text) else {
                    throw StanzaParseError(element: "status", .invalidValue(field: "code", value: text))
                }
                if !statusCodes.contains(MUCStatusCode(code)) { statusCodes.append(MUCStatusCode(code)) }
            default:
                extensions.append(child)
            }
        }
    }

    /// Whether `code` is among the status codes.
    public func has(_ code: MUCStatusCode) -> Bool { statusCodes.contains(code) }

    /// The first item (presences carry exactly one).
    public var item: MUCItem? { items.first }

    /// The element, ready to serialize.
    public var element: XElement {
        var x = XElement("x", namespace: XMPPNamespace.mucUser)
        for item in items { x.append(item.element()) }
        for code in statusCodes { x.append(XElement("status", namespace: XMPPNamespace.mucUser, ["code": String(code.rawValue)])) }
        for extra in extensions { x.append(extra) }
        return x
    }
}
