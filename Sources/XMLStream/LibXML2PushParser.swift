private import CLibXML2

/// The only file that touches libxml2: one push-parser context with hardened SAX2 callbacks feeding a
/// ``StreamTreeBuilder``.
///
/// Hardening (PLATFORM.md): `XML_PARSE_NONET | XML_PARSE_NOENT | XML_PARSE_IGNORE_ENC`, input forced to UTF-8, and the
/// parser is stopped in the DOCTYPE, entity-declaration, comment and processing-instruction callbacks, so no entity
/// is ever declared (no billion laughs, no XXE — `XML_PARSE_NONET` alone does not block `file://`). Errors go to a
/// no-op structured handler (nothing on stderr) and are read back from the context. Swift state lives in
/// `ctxt->_private`; `user_data` stays NULL so libxml2 passes the context to every callback.
///
/// Not thread-safe: owned by one ``XMLStreamParser``, used from one thread at a time. Frees the context in `deinit`.
final class LibXML2PushParser {
    private let context: xmlParserCtxtPtr
    private let builder: StreamTreeBuilder
    /// Strings for libxml2's interned names and namespace URIs, by pointer (libxml2's dictionary keeps them alive).
    fileprivate var internedStrings: [UnsafeRawPointer: String] = [:]

    private static let initialized: Bool = {
        xmlInitParser()
        return true
    }()

    /// Creates a context that reports to `builder`.
    init(builder: StreamTreeBuilder) {
        _ = LibXML2PushParser.initialized
        self.builder = builder
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = onStartElement
        handler.endElementNs = onEndElement
        handler.characters = onCharacters
        handler.ignorableWhitespace = onCharacters
        handler.cdataBlock = onCharacters
        handler.internalSubset = onDoctype
        handler.externalSubset = onDoctype
        handler.entityDecl = onEntityDeclaration
        handler.unparsedEntityDecl = onUnparsedEntityDeclaration
        handler.comment = onComment
        handler.processingInstruction = onProcessingInstruction
        handler.serror = onStructuredError
        guard let context = xmlCreatePushParserCtxt(&handler, nil, nil, 0, nil) else {
            fatalError("libxml2 could not allocate a parser context")
        }
        self.context = context
        let options = XML_PARSE_NONET.rawValue | XML_PARSE_NOENT.rawValue | XML_PARSE_IGNORE_ENC.rawValue
        xmlCtxtUseOptions(context, Int32(options))
        xmlSwitchEncoding(context, XML_CHAR_ENCODING_UTF8)
        context.pointee._private = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        context.pointee._private = nil
        xmlFreeParserCtxt(context)
    }

    /// Bytes of input libxml2 has consumed so far.
    var consumed: Int { Int(xmlByteConsumed(context)) }

    /// Parses one chunk (callbacks run synchronously inside). Returns the refusal if the input was rejected:
    /// the builder's own first, else libxml2's.
    func parse(_ bytes: UnsafeRawBufferPointer) -> XMLStreamError? {
        let status = xmlParseChunk(
            context, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), 0)
        if let error = builder.error { return error }
        guard status != 0 || context.pointee.wellFormed == 0 else { return nil }
        return libxmlError(status: Int(status))
    }

    /// The context's last error as an ``XMLStreamError``.
    private func libxmlError(status: Int) -> XMLStreamError {
        guard let last = xmlCtxtGetLastError(UnsafeMutableRawPointer(context)), last.pointee.code != 0 else {
            return XMLStreamError(.notWellFormed(code: status), message: "libxml2 stopped with status \(status)")
        }
        let code = Int(last.pointee.code)
        var message = last.pointee.message.map { String(cString: $0) } ?? "libxml2 error \(code)"
        while message.last?.isNewline == true { message.removeLast() }
        let isEncoding = code == Int(XML_ERR_INVALID_ENCODING.rawValue)
            || code == Int(XML_ERR_UNSUPPORTED_ENCODING.rawValue)
            || (code == Int(XML_ERR_INVALID_CHAR.rawValue) && message.contains("UTF-8"))
        return XMLStreamError(
            isEncoding ? .invalidUTF8 : .notWellFormed(code: code), message: message,
            line: Int(last.pointee.line), column: Int(last.pointee.int2))
    }

    fileprivate func stop(_ verdict: StreamTreeBuilder.Verdict) {
        if verdict == .stop { xmlStopParser(context) }
    }

    fileprivate func refuse(_ kind: XMLStreamError.Kind, _ message: String) {
        stop(builder.refuse(kind, message))
    }

    /// A Swift string for an interned libxml2 string (names, URIs); nil for NULL or invalid UTF-8.
    fileprivate func interned(_ pointer: UnsafePointer<xmlChar>?) -> String? {
        guard let pointer else { return nil }
        let key = UnsafeRawPointer(pointer)
        if let known = internedStrings[key] { return known }
        guard let string = String(validatingCString: UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self)) else {
            return nil
        }
        if internedStrings.count >= 4096 { internedStrings.removeAll(keepingCapacity: true) }
        internedStrings[key] = string
        return string
    }

    /// libxml2's `XML_NS_ERR_QNAME` ("Failed to parse QName").
    static let qnameError = 202
    /// libxml2's `XML_NS_ERR_UNDEFINED_NAMESPACE` ("Namespace prefix … is not defined").
    static let undefinedNamespaceError = 201
    /// libxml2's `XML_NS_ERR_XML_NAMESPACE` (a misuse of the XML namespace).
    static let xmlNamespaceError = 200

    fileprivate func startElement(
        _ localname: UnsafePointer<xmlChar>?, _ prefix: UnsafePointer<xmlChar>?, _ uri: UnsafePointer<xmlChar>?,
        _ namespaceCount: Int32, _ namespaces: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?,
        _ attributeCount: Int32, _ rawAttributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
    ) {
        guard let name = interned(localname) else { return refuse(.invalidUTF8, "element name is not UTF-8") }
        // libxml2 only warns about a name with a second colon (`a:b:c`) and reports `b:c` or `a:b:c` as the local
        // name; serialized again it would read as another prefix and element. XMPP requires namespace-well-formed XML
        // (RFC 6120 §11.2), so refuse it (found by fuzzing the serializer round trip).
        guard !name.utf8.contains(UInt8(ascii: ":")) else {
            return refuse(.notWellFormed(code: Self.qnameError), "element name '\(name)' is not namespace-well-formed")
        }
        // A prefix nobody declared is also only a warning for libxml2, which then reports the name without its
        // prefix and without a namespace: `<x:a>` would read as `<a>`, and an attribute `x:xmlns` as a namespace
        // declaration once serialized again (found by fuzzing the round trip). Not namespace-well-formed: refused.
        guard prefix == nil || uri != nil else {
            return refuse(.notWellFormed(code: Self.undefinedNamespaceError), "element '\(name)' has an undeclared prefix")
        }
        let namespace = uri.map { interned($0) ?? "" } ?? ""
        // The XML namespace holds attributes (`xml:lang`), never elements. libxml2 lets `<xml:m/>` through as an
        // element in it, and its serialization (that namespace as the default) no parser may accept (found by the
        // long fuzz run): refused. (A declaration binding it is dropped by libxml2 with an error it does not stop
        // for: a prefix so bound then counts as undeclared, and a default so declared is not one.)
        guard namespace != XMLNamespaces.xml else {
            return refuse(.notWellFormed(code: Self.xmlNamespaceError), "element '\(name)' is in the XML namespace")
        }
        var defaultNamespace: String?
        for index in 0..<Int(namespaceCount) where namespaces?[2 * index] == nil {
            defaultNamespace = interned(namespaces?[2 * index + 1]) ?? ""
        }
        var attributes: [XAttribute] = []
        attributes.reserveCapacity(Int(attributeCount))
        for index in 0..<Int(attributeCount) {
            // Five pointers per attribute: localname, prefix, URI, value start, value end.
            guard let base = rawAttributes?.advanced(by: 5 * index),
                  let attributeName = interned(base[0]), let start = base[3], let end = base[4] else {
                return refuse(.invalidUTF8, "attribute is not UTF-8")
            }
            let valueBytes = UnsafeBufferPointer(start: start, count: end - start)
            guard let value = String(validating: valueBytes, as: UTF8.self) else {
                return refuse(.invalidUTF8, "attribute value is not UTF-8")
            }
            guard !attributeName.utf8.contains(UInt8(ascii: ":")) else {
                return refuse(.notWellFormed(code: Self.qnameError), "attribute name '\(attributeName)' is not namespace-well-formed")
            }
            guard base[1] == nil || base[2] != nil else {
                return refuse(.notWellFormed(code: Self.undefinedNamespaceError),
                              "attribute '\(attributeName)' has an undeclared prefix")
            }
            attributes.append(XAttribute(attributeName, value, namespace: base[2].flatMap { interned($0) }))
        }
        stop(builder.startElement(
            name: name, namespace: namespace, attributes: attributes, declaredDefaultNamespace: defaultNamespace,
            consumed: consumed))
    }

    fileprivate func endElement() {
        stop(builder.endElement(consumed: consumed))
    }

    fileprivate func characters(_ bytes: UnsafePointer<xmlChar>?, _ count: Int32) {
        guard let bytes, count > 0 else { return }
        stop(builder.characters(UnsafeBufferPointer(start: bytes, count: Int(count)), consumed: consumed))
    }
}

// MARK: C callbacks (no captures; the wrapper is found through ctxt->_private)

private func parser(_ ctx: UnsafeMutableRawPointer?) -> LibXML2PushParser? {
    guard let ctx, let state = ctx.assumingMemoryBound(to: xmlParserCtxt.self).pointee._private else { return nil }
    return Unmanaged<LibXML2PushParser>.fromOpaque(state).takeUnretainedValue()
}

private let onStartElement: startElementNsSAX2Func = {
    ctx, localname, prefix, uri, namespaceCount, namespaces, attributeCount, _, attributes in
    parser(ctx)?.startElement(localname, prefix, uri, namespaceCount, namespaces, attributeCount, attributes)
}

private let onEndElement: endElementNsSAX2Func = { ctx, _, _, _ in
    parser(ctx)?.endElement()
}

private let onCharacters: charactersSAXFunc = { ctx, bytes, count in
    parser(ctx)?.characters(bytes, count)
}

private let onDoctype: internalSubsetSAXFunc = { ctx, _, _, _ in
    parser(ctx)?.refuse(.doctype, "DOCTYPE declarations are not allowed in XMPP")
}

private let onEntityDeclaration: entityDeclSAXFunc = { ctx, _, _, _, _, _ in
    parser(ctx)?.refuse(.entityDeclaration, "entity declarations are not allowed in XMPP")
}

private let onUnparsedEntityDeclaration: unparsedEntityDeclSAXFunc = { ctx, _, _, _, _ in
    parser(ctx)?.refuse(.entityDeclaration, "entity declarations are not allowed in XMPP")
}

private let onComment: commentSAXFunc = { ctx, _ in
    parser(ctx)?.refuse(.comment, "comments are not allowed in XMPP")
}

private let onProcessingInstruction: processingInstructionSAXFunc = { ctx, _, _ in
    parser(ctx)?.refuse(.processingInstruction, "processing instructions are not allowed in XMPP")
}

/// Keeps libxml2 quiet on stderr; the error is read back from the context instead.
private let onStructuredError: xmlStructuredErrorFunc = { _, _ in }
