import Foundation
import IsthmusCommon
import XMLStream
import XMPP

/// The XMPP wire elements of rich messages, built and read the way a real client does (RICH.md §2–5), for tests.
///
/// The namespaces are spelled out here rather than taken from ``XMPPNamespace``: they are the contract with real
/// clients, so a test must fail if the bridge's own constants drift.
public enum RichWire {
    /// XEP-0461 replies.
    public static let reply = "urn:xmpp:reply:0"
    /// XEP-0428 fallback indication.
    public static let fallback = "urn:xmpp:fallback:0"
    /// XEP-0308 last message correction.
    public static let correction = "urn:xmpp:message-correct:0"
    /// XEP-0424 v0.4 retraction (references the stanza-id).
    public static let retract1 = "urn:xmpp:message-retract:1"
    /// XEP-0424 ≤ v0.3 retraction, inside a fastening (references the origin-id).
    public static let retract0 = "urn:xmpp:message-retract:0"
    /// XEP-0422 fastening.
    public static let fasten = "urn:xmpp:fasten:0"
    /// XEP-0425 v0.2 moderation, the version mod_muc_moderation (prosody-modules 2023) speaks.
    public static let moderate0 = "urn:xmpp:message-moderate:0"
    /// XEP-0444 reactions.
    public static let reactions = "urn:xmpp:reactions:0"
    /// XEP-0334 processing hints (`<store/>`).
    public static let hints = "urn:xmpp:hints"
    /// XEP-0393 message styling (`<unstyled/>`).
    public static let styling = "urn:xmpp:styling:0"
    /// XEP-0071 XHTML-IM, which the bridge must never send.
    public static let xhtmlIM = "http://jabber.org/protocol/xhtml-im"

    // MARK: Building

    /// `<reply to='ROOM/NICK' id='STANZA-ID'/>`.
    public static func replyElement(to author: JID, id: String) -> XElement {
        XElement("reply", namespace: reply, ["to": author.description, "id": id])
    }

    /// `<fallback for='FOR'><body start end/></fallback>`: the code-point range [start, end) of the body is fallback.
    public static func fallbackElement(for feature: String, start: Int, end: Int) -> XElement {
        XElement("fallback", namespace: fallback, ["for": feature], children: [
            .element(XElement("body", namespace: fallback, ["start": String(start), "end": String(end)])),
        ])
    }

    /// `<fallback for='FOR'/>`: the whole body is fallback.
    public static func wholeBodyFallback(for feature: String) -> XElement {
        XElement("fallback", namespace: fallback, ["for": feature])
    }

    /// A reply's quoted fallback the way slixmpp's `add_quoted_fallback` writes it: "> Nick:\n> line\n" per line.
    public static func quote(nick: String, text: String) -> String {
        "> \(nick):\n" + text.split(separator: "\n", omittingEmptySubsequences: false).map { "> \($0)\n" }.joined()
    }

    /// The extensions of a XEP-0461 reply whose body is `quote(nick:text:)` followed by the reply text.
    public static func replyExtensions(to author: JID, id: String, quotedPrefix: String) -> [XElement] {
        [replyElement(to: author, id: id), fallbackElement(for: reply, start: 0, end: quotedPrefix.unicodeScalars.count)]
    }

    /// `<replace id='ORIGINAL-ID-ATTRIBUTE'/>`.
    public static func replaceElement(id: String) -> XElement {
        XElement("replace", namespace: correction, ["id": id])
    }

    /// XEP-0424 v0.4: `<retract xmlns=':1' id='STANZA-ID'/>` with its fallback marker and `<store/>` (body separate).
    public static func retractElements(stanzaID: String) -> [XElement] {
        [XElement("retract", namespace: retract1, ["id": stanzaID]), wholeBodyFallback(for: retract1), storeElement]
    }

    /// XEP-0424 v0.3: `<apply-to xmlns='urn:xmpp:fasten:0' id='ORIGIN-ID'><retract xmlns=':0'/></apply-to>` plus `<store/>`.
    public static func fastenRetractElements(originID: String) -> [XElement] {
        [XElement("apply-to", namespace: fasten, ["id": originID], children: [.element(XElement("retract", namespace: retract0))]),
         wholeBodyFallback(for: retract0), storeElement]
    }

    /// The fallback body a retraction carries for clients without XEP-0424.
    public static let retractionFallbackBody = "/me retracted a previous message, but it's unsupported by your client."

    /// `<reactions id='STANZA-ID'><reaction>…</reaction>…</reactions>` plus `<store/>` (else the room does not archive it).
    public static func reactionElements(id: String, _ keys: [String]) -> [XElement] {
        [XElement("reactions", namespace: reactions, ["id": id], children: keys.map {
            .element(XElement("reaction", namespace: reactions, children: [.text($0)]))
        }), storeElement]
    }

    /// `<store xmlns='urn:xmpp:hints'/>`.
    public static let storeElement = XElement("store", namespace: hints)

    /// `<unstyled xmlns='urn:xmpp:styling:0'/>`.
    public static let unstyledElement = XElement("unstyled", namespace: styling)

    /// The payload of mod_muc_moderation's request (XEP-0425 v0.2): retract the message with `stanzaID` from the archive
    /// and for everyone, sent as `<iq type='set' to='ROOM'>`.
    public static func moderationPayload(stanzaID: String, reason: String?) -> XElement {
        var moderate = XElement("moderate", namespace: moderate0, children: [.element(XElement("retract", namespace: retract0))])
        if let reason { moderate.append(XElement("reason", namespace: moderate0, children: [.text(reason)])) }
        return XElement("apply-to", namespace: fasten, ["id": stanzaID], children: [.element(moderate)])
    }

    /// XEP-0045 §9.6: the payload of a moderator's or owner's `<iq type='set' to='ROOM'>` giving the occupant `nick`
    /// the role `role` (e.g. `moderator`).
    public static func roleChange(nick: String, role: String) -> XElement {
        XElement("query", namespace: XMPPNamespace.mucAdmin, children: [
            .element(XElement("item", namespace: XMPPNamespace.mucAdmin, ["nick": nick, "role": role])),
        ])
    }

    // MARK: Reading

    /// Removes the code-point ranges that `<fallback for='FEATURE'>` marks from `body` (all of it when a `<body/>` has
    /// no range or the fallback has no `<body/>`); nil when the message has no such fallback.
    public static func body(_ body: String, withoutFallbackOf feature: String, in message: Message) -> String? {
        let fallbacks = message.extensions.filter { $0.name == "fallback" && $0.namespace == fallback && $0[attribute: "for"] == feature }
        guard !fallbacks.isEmpty else { return nil }
        var scalars = Array(body.unicodeScalars)
        var ranges: [Range<Int>] = []
        for element in fallbacks {
            let bodies = element.children("body", namespace: fallback)
            if bodies.isEmpty { return "" }
            for range in bodies {
                guard let start = range[attribute: "start"].flatMap(Int.init), let end = range[attribute: "end"].flatMap(Int.init) else {
                    return ""
                }
                guard 0 <= start, start <= end, end <= scalars.count else { return nil }
                ranges.append(start..<end)
            }
        }
        for range in ranges.sorted(by: { $0.lowerBound > $1.lowerBound }) { scalars.removeSubrange(range) }
        var result = ""
        result.unicodeScalars.append(contentsOf: scalars)
        return result
    }

    /// The `<fallback for='FEATURE'>` ranges as (start, end) code-point offsets.
    public static func fallbackRanges(of feature: String, in message: Message) -> [(start: Int, end: Int)] {
        message.extensions.filter { $0.name == "fallback" && $0.namespace == fallback && $0[attribute: "for"] == feature }
            .flatMap { $0.children("body", namespace: fallback) }
            .compactMap { range in
                guard let start = range[attribute: "start"].flatMap(Int.init), let end = range[attribute: "end"].flatMap(Int.init) else {
                    return nil
                }
                return (start, end)
            }
    }

    /// `(id, keys)` of a XEP-0444 `<reactions>` element, if the message has one.
    public static func reactions(in message: Message) -> (id: String?, keys: [String])? {
        guard let element = message.extensionElement("reactions", namespace: reactions) else { return nil }
        return (element[attribute: "id"], element.children("reaction", namespace: reactions).map(\.text))
    }

    /// `element` as text with attributes sorted, to compare elements whatever order a server wrote attributes in.
    public static func canonical(_ element: XElement) -> String {
        let attributes = element.attributes.map { "\($0.namespace ?? "")|\($0.name)=\($0.value)" }.sorted()
        let children = element.children.map { node in
            switch node {
            case .element(let child): canonical(child)
            case .text(let text): text.debugDescription
            }
        }
        return "{\(element.namespace)}\(element.name)\(attributes)[\(children.joined(separator: ","))]"
    }

    /// Whether `message` carries anything in the XHTML-IM namespace.
    public static func hasXHTMLIM(_ message: Message) -> Bool {
        message.extensions.contains { $0.namespace == xhtmlIM }
    }

    /// Matrix identifiers in `text`: user ids (`@user:server`), event ids (`$…`), room ids (`!…`) and `mxc://` URIs.
    /// Nothing of the kind may reach an XMPP body.
    public static func matrixIdentifiers(in text: String) -> [String] {
        let patterns = [
            #"@[A-Za-z0-9._=/+\-]+:[A-Za-z0-9.\-]+"#,  // user id
            #"\$[A-Za-z0-9_+/\-]{16,}(:[A-Za-z0-9.\-]+)?"#,  // event id (v3+ hashes; v1 with a server)
            #"![A-Za-z0-9_+/\-]{10,}(:[A-Za-z0-9.\-]+)?"#,  // room id
            #"mxc://"#,
            #"matrix\.to/"#,
        ]
        let range = NSRange(text.startIndex..., in: text)
        return patterns.flatMap { pattern in
            let expression = try! NSRegularExpression(pattern: pattern)
            return expression.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } }
        }
    }
}
