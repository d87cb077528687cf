private import CLibXML2

/// The only file that touches libxml2's HTML parser: parses a fragment of untrusted HTML (a Matrix
/// `formatted_body`) into a flat list of ``HTMLEvent``s. Pure: no I/O, callable from any thread.
///
/// Options: `HTML_PARSE_NONET` (never fetch anything), `HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING` (nothing on stderr),
/// `HTML_PARSE_IGNORE_ENC` (a `<meta charset>` in the fragment cannot switch the input away from UTF-8).
/// Not `HTML_PARSE_NOBLANKS`: it drops the space in `<b>a</b> <i>b</i>`; the converter collapses white space itself,
/// as a browser does. Not `HTML_PARSE_NOIMPLIED`: with libxml2 2.9.14 it nests the fragment's later top-level nodes
/// inside the first element (`<b>a</b>c` came out as `<b>a<p>c</p></b>`); with the implied `html`/`body` the tree is
/// right, and the converter treats `html` and `body` as plain containers (and drops `head`, where libxml2 puts a
/// leading `script`, `style` or `title`).
///
/// Bounds: libxml2 stops building the tree past 256 nested elements (`xmlParserMaxDepth`; we do not pass
/// `HTML_PARSE_HUGE`), keeping what it parsed until then, and the walk below is a loop over the node links, not a
/// recursion. NUL characters are replaced by U+FFFD before parsing (libxml2 reads a C buffer and would stop at one).
enum HTMLParser {
    private static let initialized: Bool = {
        xmlInitParser()
        return true
    }()

    private static let options = Int32(
        HTML_PARSE_NONET.rawValue | HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue
            | HTML_PARSE_IGNORE_ENC.rawValue)

    /// Parses `html` and returns its nodes in document order; comments, processing instructions and the DOCTYPE are
    /// left out. Never fails: libxml2 recovers from any input, at worst to an empty list.
    static func events(_ html: String) -> [HTMLEvent] {
        _ = initialized
        var bytes = Array(html.replacingNULs().utf8)
        guard !bytes.isEmpty else { return [] }
        let document: htmlDocPtr? = bytes.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                htmlReadMemory(chars.baseAddress, Int32(chars.count), nil, "UTF-8", options)
            }
        }
        guard let document else { return [] }
        defer { xmlFreeDoc(document) }
        return walk(document)
    }

    /// Depth-first, iteratively: down through `children`, across through `next`, back up through `parent`.
    private static func walk(_ document: htmlDocPtr) -> [HTMLEvent] {
        var events: [HTMLEvent] = []
        let root = UnsafeMutableRawPointer(document)
        var node = document.pointee.children
        while let current = node {
            switch current.pointee.type {
            case XML_ELEMENT_NODE:
                events.append(.start(name: string(current.pointee.name), attributes: attributes(of: current)))
                if let child = current.pointee.children {
                    node = child
                    continue
                }
                events.append(.end)
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                events.append(.text(string(current.pointee.content)))
            default:
                break
            }
            // Climb until a node has a next sibling, closing each element left behind.
            var climbing = current
            while climbing.pointee.next == nil {
                guard let parent = climbing.pointee.parent, UnsafeMutableRawPointer(parent) != root else { return events }
                events.append(.end)
                climbing = parent
            }
            node = climbing.pointee.next
        }
        return events
    }

    private static func attributes(of element: xmlNodePtr) -> [String: String] {
        var result: [String: String] = [:]
        var attribute = element.pointee.properties
        while let current = attribute {
            var value = ""
            var child = current.pointee.children
            while let text = child {
                value += string(text.pointee.content)
                child = text.pointee.next
            }
            result[string(current.pointee.name)] = value
            attribute = current.pointee.next
        }
        return result
    }

    /// libxml2's UTF-8 as a Swift string (ill-formed sequences become U+FFFD).
    private static func string(_ characters: UnsafePointer<xmlChar>?) -> String {
        guard let characters else { return "" }
        return String(decoding: UnsafeBufferPointer(start: characters, count: Int(xmlStrlen(characters))), as: UTF8.self)
    }
}

extension String {
    fileprivate func replacingNULs() -> String {
        guard utf8.contains(0) else { return self }
        return String(String.UnicodeScalarView(unicodeScalars.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 }))
    }
}
