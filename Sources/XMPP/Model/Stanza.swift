import IsthmusCommon
import XMLStream

/// One of the three XMPP stanzas, typed. What the component connection hands to the bridge, in arrival order.
public enum Stanza: Sendable, Hashable {
    case message(Message)
    case presence(Presence)
    case iq(IQ)

    /// Reads a top-level element as a stanza.
    public init(element: XElement) throws(StanzaParseError) {
        switch element.name {
        case "message": self = .message(try Message(element: element))
        case "presence": self = .presence(try Presence(element: element))
        case "iq": self = .iq(try IQ(element: element))
        default:
            throw StanzaParseError(element: "stanza", .unexpectedElement(name: element.name, namespace: element.namespace))
        }
    }

    /// The element, ready to serialize.
    public var element: XElement {
        switch self {
        case .message(let message): message.element
        case .presence(let presence): presence.element
        case .iq(let iq): iq.element
        }
    }

    /// The stanza's `from`.
    public var from: JID? {
        switch self {
        case .message(let message): message.from
        case .presence(let presence): presence.from
        case .iq(let iq): iq.from
        }
    }

    /// The stanza's `to`.
    public var to: JID? {
        switch self {
        case .message(let message): message.to
        case .presence(let presence): presence.to
        case .iq(let iq): iq.to
        }
    }

    /// The `id` attribute, if any.
    public var id: StanzaAttributeID? {
        switch self {
        case .message(let message): message.id
        case .presence(let presence): presence.id
        case .iq(let iq): iq.id
        }
    }
}

extension Stanza {
    /// The same stanza with other addresses (`nil` leaves an attribute out).
    public func addressed(from: JID?, to: JID?) -> Stanza {
        switch self {
        case .message(var message):
            message.from = from
            message.to = to
            return .message(message)
        case .presence(var presence):
            presence.from = from
            presence.to = to
            return .presence(presence)
        case .iq(var iq):
            iq.from = from
            iq.to = to
            return .iq(iq)
        }
    }
}
