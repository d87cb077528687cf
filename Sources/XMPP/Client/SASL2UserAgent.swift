import Foundation
import XMLStream

/// Who is logging in, as SASL2 tells the server (XEP-0388 §4.2, `<user-agent>`). The id must stay the same across
/// restarts: Bind2 servers derive the resource from it and SHOULD end older sessions of the same id (XEP-0386 §4),
/// and XEP-0484 tokens are issued per id. The bridge keeps it in its store, one per account.
public struct SASL2UserAgent: Sendable, Hashable {
    /// A UUID (XEP-0388 asks for a UUIDv4), lowercase.
    public var id: String
    /// The software's name (`<software>`).
    public var software: String
    /// A human-readable name for this installation (`<device>`), e.g. the host it runs on.
    public var device: String?

    public init(id: String, software: String = "Isthmus", device: String? = nil) {
        self.id = id
        self.software = software
        self.device = device
    }

    /// A new identity with a random UUIDv4: for a login whose id need not last (doctor, tests).
    public static func random(device: String? = nil) -> SASL2UserAgent {
        SASL2UserAgent(id: UUID().uuidString.lowercased(), device: device)
    }

    /// `<user-agent id='…'><software>…</software><device>…</device></user-agent>`.
    var element: XElement {
        var element = XElement("user-agent", namespace: XMPPNamespace.sasl2, ["id": id])
        element.append(XElement("software", namespace: XMPPNamespace.sasl2, children: [.text(software)]))
        if let device { element.append(XElement("device", namespace: XMPPNamespace.sasl2, children: [.text(device)])) }
        return element
    }
}
