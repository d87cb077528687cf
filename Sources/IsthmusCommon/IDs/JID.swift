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
        let domain = domain.lowercased()
        guard JID.isValidDomain(domain) else { return nil }
        if let localpart {
            guard !localpart.isEmpty, localpart.utf8.count <= 1023,
                  !localpart.contains(where: { JID.forbiddenInLocalpart.contains($0) || JID.isControl($0) }) else { return nil }
        }
        if let resource {
            guard !resource.isEmpty, resource.utf8.count <= 1023, !resource.contains(where: JID.isControl) else { return nil }
        }
        self.localpart = localpart?.lowercased()
        self.domain = domain
        self.resource = resource
    }

    /// Parses `local@domain/resource`; nil when it is not a valid JID.
    public init?(_ text: String) {
        var rest = Substring(text)
        var resource: String?
        if let slash = rest.firstIndex(of: "/") {
            resource = String(rest[rest.index(after: slash)...])
            rest = rest[..<slash]
        }
        var localpart: String?
        if let at = rest.firstIndex(of: "@") {
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
        guard !domain.isEmpty, domain.utf8.count <= 1023, !domain.hasPrefix("."), !domain.hasSuffix("."),
              !domain.contains("..") else { return false }
        return domain.unicodeScalars.allSatisfy {
            $0.value > 0x7f || ("a"..."z").contains($0) || ("0"..."9").contains($0) || "-.:[]".unicodeScalars.contains($0)
        }
    }
}
