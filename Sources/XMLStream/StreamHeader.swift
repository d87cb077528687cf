/// The opening tag of an XML stream (`<stream:stream …>`): its name, the namespaces it declares and its attributes.
///
/// Parsed from the peer's header, or written by us to open a stream. Pure value type.
public struct StreamHeader: Sendable, Hashable {
    /// The root element's local name (`stream` for XMPP).
    public var name: String
    /// The root element's namespace URI (`http://etherx.jabber.org/streams` for XMPP).
    public var namespace: String
    /// The default namespace the header declares: the namespace of the stanzas (e.g. `jabber:component:accept`).
    public var contentNamespace: String?
    /// Unqualified attributes by name (`id`, `to`, `from`, `version`); `xml:lang` is stored as `xml:lang`.
    public var attributes: [String: String]

    public init(name: String, namespace: String, contentNamespace: String?, attributes: [String: String]) {
        self.name = name
        self.namespace = namespace
        self.contentNamespace = contentNamespace
        self.attributes = attributes
    }

    /// The `id` attribute (the stream id the XEP-0114 handshake hashes).
    public var id: String? { attributes["id"] }
    /// The `from` attribute.
    public var from: String? { attributes["from"] }
    /// The `to` attribute.
    public var to: String? { attributes["to"] }
}
