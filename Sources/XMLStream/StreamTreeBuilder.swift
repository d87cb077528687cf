/// Turns the parser's SAX-style calls into stream events: the root's start tag, complete depth-1 elements, the
/// root's end. Enforces the depth and stanza-size limits and refuses text between stanzas.
///
/// Pure Swift (the libxml2 wrapper calls it); not thread-safe, owned by one ``XMLStreamParser``. Every method returns
/// whether parsing may go on; after a refusal ``error`` is set and the caller stops the C parser.
final class StreamTreeBuilder {
    /// Whether the C parser may continue after a call.
    enum Verdict { case proceed, stop }

    let limits: XMLStreamLimits
    /// Events completed since the parser last drained them, in order.
    var events: [XMLStreamEvent] = []
    /// The first refusal; once set, every call answers `.stop`.
    private(set) var error: XMLStreamError?
    /// Bytes consumed up to the end of the last stanza (or the root's start tag, or whitespace between stanzas).
    private(set) var lastBoundary = 0

    /// Open elements below the root (index 0 is the stanza being built).
    private var open: [XElement] = []
    private var rootIsOpen = false
    /// Character data not yet attached to the innermost open element.
    private var pendingText: [UInt8] = []

    init(limits: XMLStreamLimits) {
        self.limits = limits
    }

    /// Number of elements open, the root included.
    var depth: Int { open.count + (rootIsOpen ? 1 : 0) }

    /// A start tag. `declaredDefaultNamespace` is the `xmlns='…'` the tag declares, if any; `consumed` is the byte
    /// offset the parser has reached.
    func startElement(
        name: String, namespace: String, attributes: [XAttribute], declaredDefaultNamespace: String?, consumed: Int
    ) -> Verdict {
        guard error == nil else { return .stop }
        if !rootIsOpen {
            var header = StreamHeader(name: name, namespace: namespace, contentNamespace: declaredDefaultNamespace, attributes: [:])
            for attribute in attributes {
                let key = attribute.namespace == XMLNamespaces.xml ? "xml:\(attribute.name)" : attribute.name
                header.attributes[key] = attribute.value
            }
            rootIsOpen = true
            lastBoundary = consumed
            events.append(.streamStart(header))
            return .proceed
        }
        guard depth <= limits.maxDepth else {
            return refuse(.tooDeep(limit: limits.maxDepth), "elements nested deeper than \(limits.maxDepth) levels")
        }
        guard flushText() == .proceed else { return .stop }
        open.append(XElement(name, namespace: namespace, attributes: attributes))
        return .proceed
    }

    /// An end tag; `consumed` is the byte offset just past it.
    func endElement(consumed: Int) -> Verdict {
        guard error == nil else { return .stop }
        guard let element = open.popLast() else {
            rootIsOpen = false
            lastBoundary = consumed
            events.append(.streamEnd)
            return .proceed
        }
        var closed = element
        guard attachText(to: &closed) == .proceed else { return .stop }
        if open.isEmpty {
            guard consumed - lastBoundary <= limits.maxStanzaBytes else { return refuseTooLarge() }
            lastBoundary = consumed
            events.append(.element(closed))
        } else {
            open[open.count - 1].children.append(.element(closed))
        }
        return .proceed
    }

    /// Character data (also CDATA sections); `consumed` is the byte offset the parser has reached.
    func characters(_ bytes: UnsafeBufferPointer<UInt8>, consumed: Int) -> Verdict {
        guard error == nil else { return .stop }
        if open.isEmpty {
            // Between stanzas: whitespace keepalives are fine, anything else is not.
            guard bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) else {
                return refuse(.textBetweenStanzas, "character data between stanzas")
            }
            lastBoundary = consumed
            return .proceed
        }
        pendingText.append(contentsOf: bytes)
        guard pendingText.count <= limits.maxStanzaBytes else { return refuseTooLarge() }
        return .proceed
    }

    /// Records a refusal (forbidden markup, bad encoding…) and answers `.stop`. The first refusal wins.
    @discardableResult
    func refuse(_ kind: XMLStreamError.Kind, _ message: String) -> Verdict {
        if error == nil { error = XMLStreamError(kind, message: message) }
        return .stop
    }

    /// Checks the stanza in progress against the size limit (called after each chunk, so that a stanza that never
    /// closes is refused too).
    func checkSize(consumedOrFed: Int) -> Verdict {
        guard error == nil else { return .stop }
        guard consumedOrFed - lastBoundary <= limits.maxStanzaBytes else { return refuseTooLarge() }
        return .proceed
    }

    private func refuseTooLarge() -> Verdict {
        refuse(.stanzaTooLarge(limit: limits.maxStanzaBytes), "stanza larger than \(limits.maxStanzaBytes) bytes")
    }

    /// Moves pending text into the innermost open element.
    private func flushText() -> Verdict {
        guard !pendingText.isEmpty, !open.isEmpty else { return .proceed }
        return attachText(to: &open[open.count - 1])
    }

    private func attachText(to element: inout XElement) -> Verdict {
        guard !pendingText.isEmpty else { return .proceed }
        defer { pendingText.removeAll(keepingCapacity: true) }
        guard let text = String(validating: pendingText, as: UTF8.self) else {
            return refuse(.invalidUTF8, "character data is not UTF-8")
        }
        element.children.append(.text(text))
        return .proceed
    }
}
