private import CLibXML2

/// The only file that touches libxml2's HTML parser: parses a fragment of untrusted HTML (a Matrix
/// `formatted_body`) into a flat list of ``HTMLEvent``s. Pure: no I/O; each call has its own parser context, so it
/// is callable from any thread.
///
/// libxml2 reports the document through SAX callbacks straight into the list: no tree is built, so nothing
/// recurses and nothing is freed recursively, and the tree builder's 256-level limit (`xmlParserMaxDepth`, past which
/// it drops the rest of the input) does not apply. libxml2's HTML rules still apply: implied `html`, `head` and
/// `body` elements, end tags implied for unclosed elements (every start has its end), stray end tags ignored,
/// entities decoded, tag and attribute names folded to lower case, comments, processing instructions and the
/// DOCTYPE reported to no one.
///
/// Options: `HTML_PARSE_NONET` (never fetch anything), `HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING` and a no-op
/// structured error handler (nothing on stderr), `HTML_PARSE_IGNORE_ENC` (a `<meta charset>` in the fragment cannot
/// switch the input away from UTF-8). Not `HTML_PARSE_NOBLANKS`: it drops the space in `<b>a</b> <i>b</i>`; the
/// converter collapses white space itself, as a browser does. Not `HTML_PARSE_NOIMPLIED`: with libxml2 2.9.14 it
/// nests the fragment's later top-level nodes inside the first element (`<b>a</b>c` came out as `<b>a<p>c</p></b>`).
/// NUL characters are replaced by U+FFFD first (libxml2 would stop reading at one). Swift state lives in the
/// context's `_private` (PLATFORM.md); the SAX `ctx` argument is the context itself.
enum HTMLParser {
    private static let initialized: Bool = {
        xmlInitParser()
        return true
    }()

    private static let options = Int32(
        HTML_PARSE_NONET.rawValue | HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue
            | HTML_PARSE_IGNORE_ENC.rawValue)

    /// Parses `html` and returns its elements and text in document order. Never fails: libxml2 recovers from any
    /// input, at worst to an empty list.
    static func events(_ html: String) -> [HTMLEvent] {
        _ = initialized
        let bytes = Array(html.replacingNULs().utf8)
        guard !bytes.isEmpty else { return [] }
        let collector = Collector()
        bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                guard let context = htmlCreateMemoryParserCtxt(characters.baseAddress, Int32(characters.count)) else {
                    return
                }
                defer {
                    context.pointee._private = nil
                    if let document = context.pointee.myDoc { xmlFreeDoc(document) }
                    htmlFreeParserCtxt(context)
                }
                var handler = htmlSAXHandler()
                handler.initialized = UInt32(XML_SAX2_MAGIC)
                handler.startElement = onStartElement
                handler.endElement = onEndElement
                handler.characters = onCharacters
                handler.ignorableWhitespace = onCharacters
                handler.cdataBlock = onCharacters
                handler.serror = onStructuredError
                context.pointee.sax.pointee = handler
                context.pointee._private = Unmanaged.passUnretained(collector).toOpaque()
                htmlCtxtUseOptions(context, options)
                xmlSwitchEncoding(context, XML_CHAR_ENCODING_UTF8)
                htmlParseDocument(context)
            }
        }
        return withExtendedLifetime(collector) { collector.events }
    }

    /// Where the callbacks put what they see.
    fileprivate final class Collector {
        var events: [HTMLEvent] = []
    }
}

/// The collector of the context libxml2 passes as `ctx`.
private func collector(_ context: UnsafeMutableRawPointer?) -> HTMLParser.Collector? {
    guard let context,
          let state = context.assumingMemoryBound(to: xmlParserCtxt.self).pointee._private
    else { return nil }
    return Unmanaged<HTMLParser.Collector>.fromOpaque(state).takeUnretainedValue()
}

private func onStartElement(
    _ context: UnsafeMutableRawPointer?, _ name: UnsafePointer<xmlChar>?,
    _ attributes: UnsafeMutablePointer<UnsafePointer<xmlChar>?>?
) {
    guard let collector = collector(context) else { return }
    var pairs: [String: String] = [:]
    if let attributes {
        var index = 0
        while let key = attributes[index] {
            pairs[string(key)] = attributes[index + 1].map { string($0) } ?? ""
            index += 2
        }
    }
    collector.events.append(.start(name: string(name), attributes: pairs))
}

private func onEndElement(_ context: UnsafeMutableRawPointer?, _ name: UnsafePointer<xmlChar>?) {
    collector(context)?.events.append(.end)
}

private func onCharacters(_ context: UnsafeMutableRawPointer?, _ characters: UnsafePointer<xmlChar>?, _ length: Int32) {
    guard let collector = collector(context), let characters, length > 0 else { return }
    // libxml2 hands long text over in pieces; consumers take consecutive `.text` events as one text.
    let bytes = UnsafeBufferPointer(start: characters, count: Int(length))
    collector.events.append(.text(String(decoding: bytes, as: UTF8.self)))
}

private func onStructuredError(_ context: UnsafeMutableRawPointer?, _ error: xmlErrorPtr?) {}

/// libxml2's NUL-terminated UTF-8 as a Swift string (ill-formed sequences become U+FFFD).
private func string(_ characters: UnsafePointer<xmlChar>?) -> String {
    guard let characters else { return "" }
    return String(decoding: UnsafeBufferPointer(start: characters, count: Int(xmlStrlen(characters))), as: UTF8.self)
}

extension String {
    fileprivate func replacingNULs() -> String {
        guard utf8.contains(0) else { return self }
        return String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 }))
    }
}
