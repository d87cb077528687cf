import IsthmusCommon
import XMLStream

/// XEP-0363 HTTP File Upload v1.2.0 (`urn:xmpp:http:upload:0`): finding the service, asking for a slot, reading the
/// slot. Pure values; the IQs are sent by the component link.
public enum HTTPUpload {
    /// The `<query xmlns='disco#items'/>` of an items request (XEP-0030 §4.1).
    public static let itemsRequest = XElement("query", namespace: XMPPNamespace.discoItems)

    /// The item JIDs of a disco#items result (XEP-0030 §4.2), in document order; items without a valid JID are left out.
    public static func items(_ query: XElement) -> [JID] {
        guard query.name == "query", query.namespace == XMPPNamespace.discoItems else { return [] }
        return query.children("item", namespace: XMPPNamespace.discoItems).compactMap { item in item[attribute: "jid"].flatMap { JID($0) } }
    }

    /// An upload service as its disco#info describes it (XEP-0363 §3): nil when the entity does not offer the feature.
    public struct Service: Sendable, Equatable {
        public var jid: JID
        /// The largest file accepted (`max-file-size` of the `urn:xmpp:http:upload:0` form, §3); nil: not announced.
        public var maxFileSize: Int64?

        public init(jid: JID, maxFileSize: Int64?) {
            self.jid = jid
            self.maxFileSize = maxFileSize
        }

        /// Reads `info` of `jid`: a service only when it lists the feature.
        public init?(jid: JID, info: DiscoInfo) {
            guard info.features.contains(XMPPNamespace.httpUpload) else { return nil }
            self.jid = jid
            let form = info.forms.first { $0.formType == XMPPNamespace.httpUpload }
            maxFileSize = form?["max-file-size"]?.first.flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        }
    }

    /// The slot request (§4): `<request filename size content-type/>`.
    public static func request(fileName: String, size: Int64, contentType: String) -> XElement {
        XElement("request", namespace: XMPPNamespace.httpUpload,
                 ["filename": fileName, "size": String(size), "content-type": contentType])
    }

    /// A slot (§4): where to PUT the file, with which headers, and where it can then be fetched.
    public struct Slot: Sendable, Equatable {
        public var putURL: String
        /// The headers to send with the PUT: only `Authorization`, `Cookie` and `Expires` (§4: the others MUST be
        /// ignored; a header with a newline in its value is dropped, it could smuggle another).
        public var putHeaders: [(name: String, value: String)]
        public var getURL: String

        /// The headers a client may forward (§4).
        public static let allowedHeaders: Set<String> = ["authorization", "cookie", "expires"]

        /// Reads a `<slot>`; nil when it is not one or its URLs are not https/http.
        public init?(element: XElement) {
            guard element.name == "slot", element.namespace == XMPPNamespace.httpUpload,
                  let put = element.child("put", namespace: XMPPNamespace.httpUpload),
                  let get = element.child("get", namespace: XMPPNamespace.httpUpload),
                  let putURL = put[attribute: "url"], let getURL = get[attribute: "url"],
                  Self.isHTTP(putURL), Self.isHTTP(getURL) else { return nil }
            self.putURL = putURL
            self.getURL = getURL
            putHeaders = put.children("header", namespace: XMPPNamespace.httpUpload).compactMap { header in
                guard let name = header[attribute: "name"], Self.allowedHeaders.contains(name.lowercased()) else { return nil }
                let value = header.text
                guard !value.contains(where: { $0 == "\r" || $0 == "\n" }) else { return nil }
                return (name, value)
            }
        }

        public static func == (lhs: Slot, rhs: Slot) -> Bool {
            lhs.putURL == rhs.putURL && lhs.getURL == rhs.getURL
                && lhs.putHeaders.elementsEqual(rhs.putHeaders, by: ==)
        }

        private static func isHTTP(_ url: String) -> Bool {
            let lower = url.lowercased()
            return (lower.hasPrefix("https://") || lower.hasPrefix("http://")) && !url.contains(where: { $0.isWhitespace })
        }
    }
}
