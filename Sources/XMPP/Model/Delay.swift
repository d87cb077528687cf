import FoundationEssentials
import IsthmusCommon
import XMLStream

/// XEP-0203 delayed delivery: `<delay xmlns='urn:xmpp:delay' stamp='…' from='…'/>` — when a message was first sent
/// (history, archives, offline storage).
public struct Delay: Sendable, Hashable {
    /// The original send time.
    public var stamp: Date
    /// Who delayed it (e.g. the room).
    public var from: JID?
    /// Optional text.
    public var reason: String?

    public init(stamp: Date, from: JID? = nil, reason: String? = nil) {
        self.stamp = stamp
        self.from = from
        self.reason = reason
    }

    /// Reads the element; throws when it is not this one or lacks what the spec requires.
    public init(element: XElement) throws(StanzaParseError) {
        try element.expect("delay", XMPPNamespace.delay)
        let text = try element.required("stamp")
        guard let stamp = XMPPDateTime.parse(text) else {
            throw StanzaParseError(element: "delay", .invalidValue(field: "stamp", value: text))
        }
        self.stamp = stamp
        from = try element.jid("from")
        let reason = element.text
        self.reason = reason.isEmpty ? nil : reason
    }

    /// The element, ready to serialize.
    public var element: XElement {
        XElement("delay", namespace: XMPPNamespace.delay, ["stamp": XMPPDateTime.format(stamp), "from": from?.description],
                 children: reason.map { [.text($0)] } ?? [])
    }
}
