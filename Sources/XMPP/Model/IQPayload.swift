import XMLStream

/// The payload of an ``IQ``, typed for the protocols Isthmus speaks; anything else is kept as raw XML.
public enum IQPayload: Sendable, Hashable {
    /// XEP-0199 `<ping xmlns='urn:xmpp:ping'/>` (also XEP-0410 self-ping).
    case ping
    /// XEP-0030 `<query xmlns='…disco#info'>`: empty in a request, identities and features in a result.
    case discoInfo(DiscoInfo)
    /// XEP-0313 `<query xmlns='urn:xmpp:mam:2'>`.
    case mamQuery(MAMQuery)
    /// XEP-0313 `<fin xmlns='urn:xmpp:mam:2'>`, the result of a MAM query.
    case mamFin(MAMFin)
    /// XEP-0045 `<query xmlns='…muc#owner'>` with an optional data form (an empty `submit` form makes an instant room).
    case mucOwner(DataForm?)
    /// Any other payload, or a known one that did not parse.
    case other(XElement)

    /// Reads a payload element; never fails (unknown or malformed payloads become ``other(_:)``).
    public init(element: XElement) {
        switch (element.name, element.namespace) {
        case ("ping", XMPPNamespace.ping):
            self = .ping
        case ("query", XMPPNamespace.discoInfo):
            self = (try? DiscoInfo(element: element)).map(IQPayload.discoInfo) ?? .other(element)
        case ("query", XMPPNamespace.mam):
            self = (try? MAMQuery(element: element)).map(IQPayload.mamQuery) ?? .other(element)
        case ("fin", XMPPNamespace.mam):
            self = (try? MAMFin(element: element)).map(IQPayload.mamFin) ?? .other(element)
        case ("query", XMPPNamespace.mucOwner):
            let form = element.child("x", namespace: XMPPNamespace.dataForms).flatMap { try? DataForm(element: $0) }
            self = .mucOwner(form)
        default:
            self = .other(element)
        }
    }

    /// The element, ready to serialize.
    public var element: XElement {
        switch self {
        case .ping: XElement("ping", namespace: XMPPNamespace.ping)
        case .discoInfo(let info): info.element
        case .mamQuery(let query): query.element
        case .mamFin(let fin): fin.element
        case .mucOwner(let form):
            XElement("query", namespace: XMPPNamespace.mucOwner, children: form.map { [.element($0.element)] } ?? [])
        case .other(let element): element
        }
    }
}
