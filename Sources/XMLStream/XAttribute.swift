/// One attribute of an ``XElement``.
public struct XAttribute: Sendable, Hashable {
    /// The local name, e.g. `id` or `lang` (for `xml:lang`).
    public var name: String
    /// The namespace URI, nil for unqualified attributes (nearly all XMPP attributes). `xml:lang` has
    /// ``XMLNamespaces/xml``.
    public var namespace: String?
    /// The value, unescaped.
    public var value: String

    /// An attribute; unqualified unless `namespace` is given.
    public init(_ name: String, _ value: String, namespace: String? = nil) {
        self.name = name
        self.value = value
        self.namespace = namespace
    }
}

/// Namespaces that XML itself defines.
public enum XMLNamespaces {
    /// The `xml:` prefix's namespace (`xml:lang`), always bound.
    public static let xml = "http://www.w3.org/XML/1998/namespace"
}
