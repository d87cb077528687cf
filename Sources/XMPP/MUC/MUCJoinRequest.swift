import FoundationEssentials
import XMLStream

/// How much history a joining occupant asks the room to replay (XEP-0045 §7.2.14).
public enum MUCHistoryRequest: Sendable, Hashable {
    /// `<history maxstanzas='0'/>`: none (the bridge catches up through MAM instead).
    case none
    /// `<history maxstanzas='N'/>`.
    case maxStanzas(Int)
    /// `<history since='…'/>`: everything after a point in time.
    case since(Date)
}

/// `<x xmlns='http://jabber.org/protocol/muc'>` on a join presence (XEP-0045 §7.2.1). Without it Prosody does not
/// create rooms and treats the presence as a plain presence update.
public struct MUCJoinRequest: Sendable, Hashable {
    /// How much history to replay; nil lets the room decide (Prosody: 20 messages).
    public var history: MUCHistoryRequest?
    /// The room password, for protected rooms.
    public var password: String?

    public init(history: MUCHistoryRequest? = MUCHistoryRequest.none, password: String? = nil) {
        self.history = history
        self.password = password
    }

    /// Reads the element; throws when it is not this one or lacks what the spec requires.
    public init(element: XElement) throws(StanzaParseError) {
        try element.expect("x", XMPPNamespace.muc)
        password = element.childText("password", XMPPNamespace.muc)
        history = nil
        if let history = element.child("history", namespace: XMPPNamespace.muc) {
            if let since = history[attribute: "since"], let date = XMPPDateTime.parse(since) {
                self.history = .since(date)
            } else if let text = history[attribute: "maxstanzas"], let count = Int(text) {
                self.history = count == 0 ? MUCHistoryRequest.none : .maxStanzas(count)
            }
        }
    }

    /// The element, ready to serialize.
    public var element: XElement {
        var x = XElement("x", namespace: XMPPNamespace.muc)
        switch history {
        case nil: break
        case .none?: x.append(XElement("history", namespace: XMPPNamespace.muc, ["maxstanzas": "0"]))
        case .maxStanzas(let count)?: x.append(XElement("history", namespace: XMPPNamespace.muc, ["maxstanzas": String(count)]))
        case .since(let date)?: x.append(XElement("history", namespace: XMPPNamespace.muc, ["since": XMPPDateTime.format(date)]))
        }
        if let password { x.append(XElement("password", namespace: XMPPNamespace.muc, children: [.text(password)])) }
        return x
    }
}
