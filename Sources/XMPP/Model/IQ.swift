import IsthmusCommon
import XMLStream

/// An `<iq>` stanza (RFC 6120 §8.2.3): a request (`get`/`set`) with one payload, or its response (`result`/`error`).
public struct IQ: Sendable, Hashable {
    /// RFC 6120 §8.2.3: requests are `get`/`set`, responses `result`/`error`.
    public enum IQType: String, Sendable, Hashable {
        case get, set, result, error
    }

    /// Request or response kind.
    public var type: IQType
    /// The sender.
    public var from: JID?
    /// The recipient (nil: the server).
    public var to: JID?
    /// Required on every IQ; responses echo the request's id.
    public var id: StanzaAttributeID
    /// The single payload child (requests always have one; results may have none).
    public var payload: IQPayload?
    /// The error of a `type='error'` response.
    public var error: StanzaError?

    public init(
        type: IQType, from: JID? = nil, to: JID? = nil, id: StanzaAttributeID = .random(), payload: IQPayload? = nil,
        error: StanzaError? = nil
    ) {
        self.type = type
        self.from = from
        self.to = to
        self.id = id
        self.payload = payload
        self.error = error
    }

    /// Whether this is a request (get or set) that calls for a response.
    public var isRequest: Bool { type == .get || type == .set }

    /// The `result` answering this request (addresses swapped, same id).
    public func result(payload: IQPayload? = nil) -> IQ {
        IQ(type: .result, from: to, to: from, id: id, payload: payload)
    }

    /// The `error` answering this request (addresses swapped, same id).
    public func errorResponse(_ error: StanzaError) -> IQ {
        IQ(type: .error, from: to, to: from, id: id, error: error)
    }

    /// Reads the element; throws when it is not this one or lacks what the spec requires.
    public init(element: XElement) throws(StanzaParseError) {
        guard element.name == "iq", XMPPNamespace.stanzaNamespaces.contains(element.namespace) else {
            throw StanzaParseError(element: "iq", .unexpectedElement(name: element.name, namespace: element.namespace))
        }
        let typeText = try element.required("type")
        guard let type = IQType(rawValue: typeText) else {
            throw StanzaParseError(element: "iq", .invalidValue(field: "type", value: typeText))
        }
        let idText = try element.required("id")
        guard let id = StanzaAttributeID(idText) else {
            throw StanzaParseError(element: "iq", .invalidValue(field: "id", value: idText))
        }
        self.init(type: type, from: try element.jid("from"), to: try element.jid("to"), id: id)
        for child in element.elements {
            if child.name == "error", child.namespace == element.namespace {
                error = try? StanzaError(element: child)
            } else if payload == nil {
                payload = IQPayload(element: child)
            }
        }
    }

    /// The `<iq>` element (component namespace, left implicit by the serializer).
    public var element: XElement {
        var iq = XElement("iq", namespace: XMPPNamespace.component, [
            "type": type.rawValue, "from": from?.description, "to": to?.description, "id": id.rawValue,
        ])
        if let payload { iq.append(payload.element) }
        if let error { iq.append(error.element(namespace: XMPPNamespace.component)) }
        return iq
    }
}
