import XMLStream

/// A file a message shares: its URL and what is known about it. Read from XEP-0066 `<x xmlns='jabber:x:oob'><url/>`
/// and XEP-0447 `<file-sharing xmlns='urn:xmpp:sfs:0'>` (its XEP-0446 `<file>` metadata and `<url-data target>`
/// source; SFS wins where both are present); written as both, OOB for the clients that only know it (XEP-0447 §4
/// recommends it), with a XEP-0428 fallback marking the body (the URL) as SFS's fallback. Pure value.
public struct SharedFile: Sendable, Hashable, Codable {
    public var url: String
    /// `media-type`, e.g. `image/png`.
    public var mediaType: String?
    public var name: String?
    public var size: Int64?
    public var width: Int?
    public var height: Int?
    /// `desc`: a caption.
    public var desc: String?

    public init(url: String, mediaType: String? = nil, name: String? = nil, size: Int64? = nil, width: Int? = nil,
                height: Int? = nil, desc: String? = nil) {
        self.url = url
        self.mediaType = mediaType
        self.name = name
        self.size = size
        self.width = width
        self.height = height
        self.desc = desc
    }

    /// URLs longer than this are ignored (no sane upload service makes them).
    static let maxURLLength = 4096

    /// Reads an OOB `<x>` or an SFS `<file-sharing>`, on top of what an earlier element gave; nil when it has no URL
    /// and nothing came before.
    init?(_ element: XElement, merging earlier: SharedFile?) {
        func limited(_ text: String?, _ limit: Int = 1024) -> String? {
            guard let text, !text.isEmpty, text.utf8.count <= limit else { return nil }
            return text
        }
        if element.namespace == XMPPNamespace.outOfBand {
            if let earlier { self = earlier; return }
            guard let url = limited(element.child("url", namespace: XMPPNamespace.outOfBand)?.text, Self.maxURLLength) else { return nil }
            self.init(url: trimmed(url))
            return
        }
        let source = element.child("sources", namespace: XMPPNamespace.fileSharing)?
            .child("url-data", namespace: XMPPNamespace.urlData)?[attribute: "target"]
        guard let url = limited(source, Self.maxURLLength) ?? earlier?.url else { return nil }
        self.init(url: url)
        if let file = element.child("file", namespace: XMPPNamespace.fileMetadata) {
            mediaType = limited(file.child("media-type", namespace: XMPPNamespace.fileMetadata)?.text, 255)
            name = limited(file.child("name", namespace: XMPPNamespace.fileMetadata)?.text, 255)
            size = file.child("size", namespace: XMPPNamespace.fileMetadata).flatMap { Int64($0.text) }.flatMap { $0 >= 0 ? $0 : nil }
            width = file.child("width", namespace: XMPPNamespace.fileMetadata).flatMap { Int($0.text) }
            height = file.child("height", namespace: XMPPNamespace.fileMetadata).flatMap { Int($0.text) }
            desc = limited(file.child("desc", namespace: XMPPNamespace.fileMetadata)?.text, 4096)
        }
    }

    /// OOB, then SFS with its metadata and source, then the fallback marker for the body.
    var elements: [XElement] {
        var metadata: [XNode] = []
        func add(_ name: String, _ value: String?) {
            if let value { metadata.append(.element(XElement(name, namespace: XMPPNamespace.fileMetadata, children: [.text(value)]))) }
        }
        add("media-type", mediaType)
        add("name", name)
        add("size", size.map(String.init))
        add("width", width.map(String.init))
        add("height", height.map(String.init))
        add("desc", desc)
        let oob = XElement("x", namespace: XMPPNamespace.outOfBand,
                           children: [.element(XElement("url", namespace: XMPPNamespace.outOfBand, children: [.text(url)]))])
        let sfs = XElement("file-sharing", namespace: XMPPNamespace.fileSharing, ["disposition": "inline"], children: [
            .element(XElement("file", namespace: XMPPNamespace.fileMetadata, children: metadata)),
            .element(XElement("sources", namespace: XMPPNamespace.fileSharing, children: [
                .element(XElement("url-data", namespace: XMPPNamespace.urlData, ["target": url])),
            ])),
        ])
        let fallback = XElement("fallback", namespace: XMPPNamespace.fallback, ["for": XMPPNamespace.fileSharing],
                                children: [.element(XElement("body", namespace: XMPPNamespace.fallback))])
        return [oob, sfs, fallback]
    }
}
