/// An XMPP address (RFC 7622): `[localpart@]domainpart[/resourcepart]`, validated at init.
///
/// Localpart and domain are case-folded (lowercased) as an approximation of PRECIS/nodeprep; the resource is kept
/// as sent (it is a MUC nick in rooms). Each part is limited to 1023 bytes.
public struct JID: Sendable, Hashable, Codable, CustomStringConvertible, LosslessStringConvertible {
    public let localpart: String?
    public let domain: String
    public let resource: String?

    /// Characters RFC 7622 forbids in a localpart.
    static let forbiddenInLocalpart: Set<Character> = ["\"", "&", "'", "/", ":", "<", ">", "@", " ", "\t", "\n", "\r"]

    /// Builds a JID from parts; nil when a part is invalid.
    public init?(localpart: String?, domain: String, resource: String? = nil) {
        let domain = JID.lowercased(domain)
        guard JID.isValidDomain(domain) else { return nil }
        // Validation and case folding are on the hot path (every stanza's from/to): ASCII text takes byte-level fast
        // paths that give the same answers as the Character-level checks.
        if let localpart {
            guard !localpart.isEmpty, localpart.utf8.count <= 1023, JID.isValidLocalpart(localpart) else { return nil }
        }
        if let resource {
            // A control character is a control scalar in any grapheme, and in UTF-8 such scalars are exactly the bytes
            // below 0x20 and 0x7f: checking bytes is the same test as checking characters, without grapheme breaking.
            guard !resource.isEmpty, resource.utf8.count <= 1023, !resource.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) else {
                return nil
            }
        }
        self.localpart = localpart.map(JID.lowercased)
        self.domain = domain
        self.resource = resource
    }

    /// Parses `local@domain/resource`; nil when it is not a valid JID.
    public init?(_ text: String) {
        var rest = Substring(text)
        var resource: String?
        // In ASCII text every character is one byte: find the separators in the UTF-8 view (no grapheme breaking).
        let ascii = JID.isASCII(text)
        if let slash = ascii ? rest.utf8.firstIndex(of: UInt8(ascii: "/")) : rest.firstIndex(of: "/") {
            resource = String(rest[rest.index(after: slash)...])
            rest = rest[..<slash]
        }
        var localpart: String?
        if let at = ascii ? rest.utf8.firstIndex(of: UInt8(ascii: "@")) : rest.firstIndex(of: "@") {
            localpart = String(rest[..<at])
            rest = rest[rest.index(after: at)...]
        }
        self.init(localpart: localpart, domain: String(rest), resource: resource)
    }

    /// The JID without its resource.
    public var bare: JID { resource == nil ? self : JID(validated: localpart, domain, nil) }

    /// Whether this JID has no resource.
    public var isBare: Bool { resource == nil }

    /// This JID's bare form with `resource` (e.g. a MUC occupant JID `room@service/nick`); nil if the nick is invalid.
    public func with(resource: String) -> JID? { JID(localpart: localpart, domain: domain, resource: resource) }

    public var description: String {
        var text = ""
        if let localpart { text += localpart + "@" }
        text += domain
        if let resource { text += "/" + resource }
        return text
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let jid = JID(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "invalid JID '\(text)'"))
        }
        self = jid
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    private init(validated localpart: String?, _ domain: String, _ resource: String?) {
        self.localpart = localpart
        self.domain = domain
        self.resource = resource
    }

    static func isControl(_ character: Character) -> Bool {
        character.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f }
    }

    static func isValidDomain(_ domain: String) -> Bool {
        guard !domain.isEmpty, domain.utf8.count <= 1023 else { return false }
        guard isASCII(domain) else {
            guard !domain.hasPrefix("."), !domain.hasSuffix("."), !domain.contains("..") else { return false }
            return domain.unicodeScalars.allSatisfy {
                $0.value > 0x7f || ("a"..."z").contains($0) || ("0"..."9").contains($0) || "-.:[]".unicodeScalars.contains($0)
            }
        }
        // ASCII (the usual case): the same checks on bytes, in one pass.
        var previous: UInt8 = 0
        for byte in domain.utf8 {
            if byte == UInt8(ascii: ".") && (previous == 0 || previous == UInt8(ascii: ".")) { return false }
            guard (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "[")
                    || byte == UInt8(ascii: "]") else { return false }
            previous = byte
        }
        return previous != UInt8(ascii: ".")
    }

    /// No character RFC 7622 forbids in a localpart, and no control character.
    static func isValidLocalpart(_ localpart: String) -> Bool {
        guard isASCII(localpart) else {
            return !localpart.contains(where: { JID.forbiddenInLocalpart.contains($0) || JID.isControl($0) })
        }
        // ASCII: each character is one byte (but "\r\n", which is refused as a control character either way).
        return !localpart.utf8.contains { byte in
            byte < 0x20 || byte == 0x7f || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "&") || byte == UInt8(ascii: "'")
                || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">")
                || byte == UInt8(ascii: "@") || byte == UInt8(ascii: " ")
        }
    }

    static func isASCII(_ text: String) -> Bool { text.utf8.allSatisfy { $0 < 0x80 } }

    /// `text.lowercased()`, without the Unicode machinery when there is nothing to change in ASCII text.
    static func lowercased(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 && !($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) }) { return text }
        return text.lowercased()
    }
}
