/// Writes ``XElement`` values and stream tags as UTF-8 bytes. Pure functions, no I/O.
///
/// Namespaces: an element whose namespace equals its parent's (or, for the top element, the given `defaultNamespace`)
/// gets no `xmlns`; one bound to a prefix in `prefixes` is written with that prefix (`stream:error`); any other gets
/// `xmlns='…'`, which its children inherit. Qualified attributes use `xml:` for ``XMLNamespaces/xml`` and a declared
/// `nsN:` prefix otherwise.
///
/// Escaping: see ``XMLEscaping``.
public enum XMLSerializer {
    /// `<?xml version='1.0'?>`, sent before a stream header.
    public static let xmlDeclaration: [UInt8] = Array("<?xml version='1.0'?>".utf8)

    /// The bytes of `element` as a top-level stanza of a stream whose default namespace is `defaultNamespace`
    /// (nil: the element's own namespace is taken as the stream's, so the top element carries no `xmlns`).
    public static func bytes(
        of element: XElement, defaultNamespace: String? = nil, prefixes: [String: String] = [:]
    ) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        append(element, to: &buffer, defaultNamespace: defaultNamespace ?? element.namespace, prefixes: prefixes)
        return buffer
    }

    /// The element as a `String` (for logs and tests).
    public static func string(
        of element: XElement, defaultNamespace: String? = nil, prefixes: [String: String] = [:]
    ) -> String {
        String(decoding: bytes(of: element, defaultNamespace: defaultNamespace, prefixes: prefixes), as: UTF8.self)
    }

    /// Appends `element` to `buffer`.
    public static func append(
        _ element: XElement, to buffer: inout [UInt8], defaultNamespace: String, prefixes: [String: String]
    ) {
        buffer.append(UInt8(ascii: "<"))
        var childDefault = defaultNamespace
        var tagName: [UInt8] = []
        if element.namespace != defaultNamespace,
           let prefix = prefixes.first(where: { $0.value == element.namespace })?.key {
            tagName.append(contentsOf: prefix.utf8)
            tagName.append(UInt8(ascii: ":"))
        }
        tagName.append(contentsOf: element.name.utf8)
        buffer.append(contentsOf: tagName)
        if element.namespace != defaultNamespace, tagName.count == element.name.utf8.count {
            appendAttribute("xmlns", element.namespace, to: &buffer)
            childDefault = element.namespace
        }
        var declaredPrefixes = 0
        for attribute in element.attributes {
            guard let namespace = attribute.namespace else {
                appendAttribute(attribute.name, attribute.value, to: &buffer)
                continue
            }
            if namespace == XMLNamespaces.xml {
                appendAttribute("xml:" + attribute.name, attribute.value, to: &buffer)
            } else {
                let prefix = "ns\(declaredPrefixes)"
                declaredPrefixes += 1
                appendAttribute("xmlns:" + prefix, namespace, to: &buffer)
                appendAttribute(prefix + ":" + attribute.name, attribute.value, to: &buffer)
            }
        }
        if element.children.isEmpty {
            buffer.append(contentsOf: [UInt8(ascii: "/"), UInt8(ascii: ">")])
            return
        }
        buffer.append(UInt8(ascii: ">"))
        for child in element.children {
            switch child {
            case .element(let inner):
                append(inner, to: &buffer, defaultNamespace: childDefault, prefixes: prefixes)
            case .text(let text):
                XMLEscaping.appendText(text, to: &buffer)
            }
        }
        buffer.append(contentsOf: [UInt8(ascii: "<"), UInt8(ascii: "/")])
        buffer.append(contentsOf: tagName)
        buffer.append(UInt8(ascii: ">"))
    }

    /// An unclosed stream start tag: `<prefix:name xmlns='content' xmlns:prefix='namespace' key='value'…>`.
    /// Attributes are written in the order given.
    public static func streamStart(
        name: String = "stream", prefix: String = "stream", namespace: String, contentNamespace: String,
        attributes: KeyValuePairs<String, String?>
    ) -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.append(UInt8(ascii: "<"))
        buffer.append(contentsOf: "\(prefix):\(name)".utf8)
        appendAttribute("xmlns", contentNamespace, to: &buffer)
        appendAttribute("xmlns:" + prefix, namespace, to: &buffer)
        for case (let key, let value?) in attributes {
            appendAttribute(key, value, to: &buffer)
        }
        buffer.append(UInt8(ascii: ">"))
        return buffer
    }

    /// The stream end tag, `</prefix:name>`.
    public static func streamEnd(name: String = "stream", prefix: String = "stream") -> [UInt8] {
        Array("</\(prefix):\(name)>".utf8)
    }

    private static func appendAttribute(_ name: String, _ value: String, to buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: " "))
        buffer.append(contentsOf: name.utf8)
        buffer.append(contentsOf: [UInt8(ascii: "="), UInt8(ascii: "'")])
        XMLEscaping.appendAttributeValue(value, to: &buffer)
        buffer.append(UInt8(ascii: "'"))
    }
}
