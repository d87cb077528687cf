/// An XML element as a value: a namespaced name, attributes in document order and child nodes.
///
/// The unit the stream parser hands out (one complete top-level stanza) and the serializer writes. Namespaces are
/// kept as URIs; prefixes are not part of the value (the serializer chooses them). Pure value type, no I/O.
public struct XElement: Sendable, Hashable {
    /// The local name, e.g. `message`.
    public var name: String
    /// The namespace URI (`""` when the element is in no namespace).
    public var namespace: String
    /// Attributes in document order.
    public var attributes: [XAttribute]
    /// Child elements and text, in document order.
    public var children: [XNode]

    /// Builds an element; children and attributes default to none.
    public init(_ name: String, namespace: String, attributes: [XAttribute] = [], children: [XNode] = []) {
        self.name = name
        self.namespace = namespace
        self.attributes = attributes
        self.children = children
    }

    /// Builds an element from `name: value` pairs for unqualified attributes; nil values are left out.
    public init(_ name: String, namespace: String, _ attributes: KeyValuePairs<String, String?>, children: [XNode] = []) {
        self.init(name, namespace: namespace, attributes: attributes.compactMap { key, value in
            value.map { XAttribute(key, $0) }
        }, children: children)
    }

    /// The value of the unqualified attribute `name` (e.g. `id`, `from`), if present.
    public subscript(attribute name: String) -> String? {
        get { attributes.first { $0.name == name && $0.namespace == nil }?.value }
        set {
            if let index = attributes.firstIndex(where: { $0.name == name && $0.namespace == nil }) {
                if let newValue { attributes[index].value = newValue } else { attributes.remove(at: index) }
            } else if let newValue {
                attributes.append(XAttribute(name, newValue))
            }
        }
    }

    /// The child elements (text nodes skipped).
    public var elements: some Sequence<XElement> {
        children.lazy.compactMap { if case .element(let element) = $0 { element } else { nil } }
    }

    /// The first child element called `name` in `namespace`.
    public func child(_ name: String, namespace: String) -> XElement? {
        for case .element(let element) in children where element.name == name && element.namespace == namespace {
            return element
        }
        return nil
    }

    /// Every child element called `name` in `namespace`, in order.
    public func children(_ name: String, namespace: String) -> [XElement] {
        elements.filter { $0.name == name && $0.namespace == namespace }
    }

    /// The concatenated text of the direct text children (character data of this element only).
    public var text: String {
        var result = ""
        for case .text(let text) in children { result += text }
        return result
    }

    /// Appends a child element.
    public mutating func append(_ element: XElement) { children.append(.element(element)) }

    /// Appends a text node.
    public mutating func append(text: String) { children.append(.text(text)) }
}
