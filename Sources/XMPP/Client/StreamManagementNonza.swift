import XMLStream

/// The XEP-0198 elements that are not stanzas ("nonzas", `urn:xmpp:sm:3`): they are never counted, and they are read
/// and written here only. `h` is a 32-bit counter that wraps (XEP-0198 §4).
public enum StreamManagementNonza: Sendable, Hashable {
    /// `<enable resume='true' max='…'/>`: the client asks for acks (and resumption) once bound.
    case enable(resume: Bool, max: Int?)
    /// `<enabled id='…' resume='true' max='…' location='…'/>`: the server agreed. `id` names the session for a resume.
    case enabled(id: String?, resume: Bool, max: Int?, location: String?)
    /// `<failed h='…'><condition/></failed>`: enable or resume refused (`item-not-found`: the session is gone).
    case failed(StanzaErrorCondition?, h: UInt32?)
    /// `<r/>`: acknowledge what you handled.
    case requestAck
    /// `<a h='…'/>`: the stanzas the sender of this has handled, in all, since enable.
    case ack(h: UInt32)
    /// `<resume previd='…' h='…'/>`: the client takes up its session again; `h` counts the server's stanzas it handled.
    case resume(previd: String, h: UInt32)
    /// `<resumed previd='…' h='…'/>`: done; `h` counts the client's stanzas the server handled.
    case resumed(previd: String, h: UInt32)

    /// Reads one; nil when the element is not in the stream-management namespace.
    public init?(element: XElement) throws(StanzaParseError) {
        guard element.namespace == XMPPNamespace.streamManagement else { return nil }
        switch element.name {
        case "enable":
            self = .enable(resume: Self.flag(element[attribute: "resume"]), max: try Self.number(element, "max"))
        case "enabled":
            self = .enabled(id: element[attribute: "id"], resume: Self.flag(element[attribute: "resume"]),
                            max: try Self.number(element, "max"), location: element[attribute: "location"])
        case "failed":
            let condition = element.elements.first { $0.namespace == XMPPNamespace.stanzaErrors }.map { StanzaErrorCondition($0.name) }
            self = .failed(condition, h: try Self.optionalCounter(element))
        case "r":
            self = .requestAck
        case "a":
            self = .ack(h: try Self.counter(element))
        case "resume", "resumed":
            guard let previd = element[attribute: "previd"], !previd.isEmpty else {
                throw StanzaParseError(element: element.name, .missingAttribute("previd"))
            }
            let h = try Self.counter(element)
            self = element.name == "resume" ? .resume(previd: previd, h: h) : .resumed(previd: previd, h: h)
        default:
            throw StanzaParseError(element: element.name, .unexpectedElement(name: element.name, namespace: element.namespace))
        }
    }

    /// The element to write.
    public var element: XElement {
        let ns = XMPPNamespace.streamManagement
        switch self {
        case .enable(let resume, let max):
            return XElement("enable", namespace: ns, ["resume": resume ? "true" : nil, "max": max.map(String.init)])
        case .enabled(let id, let resume, let max, let location):
            return XElement("enabled", namespace: ns, ["id": id, "resume": resume ? "true" : nil, "max": max.map(String.init),
                                                       "location": location])
        case .failed(let condition, let h):
            var element = XElement("failed", namespace: ns, ["h": h.map(String.init)])
            if let condition { element.append(XElement(condition.rawValue, namespace: XMPPNamespace.stanzaErrors)) }
            return element
        case .requestAck:
            return XElement("r", namespace: ns)
        case .ack(let h):
            return XElement("a", namespace: ns, ["h": String(h)])
        case .resume(let previd, let h):
            return XElement("resume", namespace: ns, ["previd": previd, "h": String(h)])
        case .resumed(let previd, let h):
            return XElement("resumed", namespace: ns, ["previd": previd, "h": String(h)])
        }
    }

    /// XML Schema booleans: `true` or `1`.
    private static func flag(_ value: String?) -> Bool { value == "true" || value == "1" }

    private static func number(_ element: XElement, _ name: String) throws(StanzaParseError) -> Int? {
        guard let value = element[attribute: name] else { return nil }
        guard let number = Int(value), number >= 0 else {
            throw StanzaParseError(element: element.name, .invalidValue(field: name, value: value))
        }
        return number
    }

    private static func optionalCounter(_ element: XElement) throws(StanzaParseError) -> UInt32? {
        guard let value = element[attribute: "h"] else { return nil }
        guard let h = UInt32(value) else { throw StanzaParseError(element: element.name, .invalidValue(field: "h", value: value)) }
        return h
    }

    private static func counter(_ element: XElement) throws(StanzaParseError) -> UInt32 {
        guard let h = try optionalCounter(element) else { throw StanzaParseError(element: element.name, .missingAttribute("h")) }
        return h
    }
}
