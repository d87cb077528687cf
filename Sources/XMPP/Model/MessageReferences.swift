import IsthmusCommon
import XMLStream

/// The parts of a `<message>` that refer to another message or qualify its body: a reply (XEP-0461), a correction
/// (XEP-0308), a retraction (XEP-0424, both wire versions), a moderation announcement (XEP-0425, both wire versions),
/// a set of reactions (XEP-0444), fallback ranges (XEP-0428), `<unstyled/>` (XEP-0393) and `<store/>` (XEP-0334).
///
/// Which id each one carries differs by XEP (see RICH.md A1): replies, reactions, `:1` retractions and moderation
/// name the room's stanza-id; corrections the original's `id` attribute; `:0` retractions its origin-id. The values
/// keep the ids as text: the bridge resolves them against its message map. Pure value, read from and written to
/// elements; malformed elements are ignored (the message is then bridged as its plain body).
public struct MessageReferences: Sendable, Hashable, Codable {
    /// XEP-0461 `<reply to id>`: the author's occupant JID (optional) and the stanza-id of the message answered.
    public struct Reply: Sendable, Hashable, Codable {
        public var to: JID?
        public var id: String
        public init(to: JID?, id: String) {
            self.to = to
            self.id = id
        }
    }

    /// Which form of XEP-0424 a retraction used, and the id it names.
    public enum Retraction: Sendable, Hashable, Codable {
        /// `<retract xmlns='urn:xmpp:message-retract:1' id='STANZA-ID'/>` (v0.4+; origin-id in rooms without stanza-ids).
        case current(id: String)
        /// `<apply-to xmlns='urn:xmpp:fasten:0' id='ORIGIN-ID'><retract xmlns='urn:xmpp:message-retract:0'/></apply-to>`.
        case legacy(originID: String)

        public var id: String {
            switch self {
            case .current(let id): id
            case .legacy(let id): id
            }
        }
    }

    /// A XEP-0425 moderation announcement: the room removed the message with this stanza-id. Trust it only from the
    /// room's bare JID (XEP-0425 §Business Rules).
    public struct Moderation: Sendable, Hashable, Codable {
        public var stanzaID: String
        /// The moderator's occupant JID (`by`), when given.
        public var by: JID?
        public var reason: String?
        public init(stanzaID: String, by: JID?, reason: String?) {
            self.stanzaID = stanzaID
            self.by = by
            self.reason = reason
        }
    }

    /// XEP-0444 `<reactions id>`: the sender's whole current set of reactions to the message with this stanza-id.
    public struct Reactions: Sendable, Hashable, Codable {
        public var id: String
        public var keys: [String]
        public init(id: String, keys: [String]) {
            self.id = id
            self.keys = keys
        }
    }

    /// XEP-0428 `<fallback for>`: which body ranges (Unicode scalar offsets, end exclusive) only exist for clients
    /// without the feature `for`; nil ranges: the whole body.
    public struct Fallback: Sendable, Hashable, Codable {
        public var feature: String
        public var ranges: [Range<Int>]?
        public init(feature: String, ranges: [Range<Int>]?) {
            self.feature = feature
            self.ranges = ranges
        }
    }

    public var reply: Reply?
    /// XEP-0308 `<replace id>`: the `id` attribute of the original message.
    public var replaces: String?
    /// Every retraction form present (the bridge sends both, so older and newer clients act).
    public var retractions: [Retraction]
    public var moderation: Moderation?
    public var reactions: Reactions?
    public var fallbacks: [Fallback]
    /// XEP-0393 `<unstyled/>`: the body must not be read as styled.
    public var unstyled: Bool
    /// XEP-0334 `<store/>`: archive this even without a body.
    public var store: Bool
    /// A shared file: XEP-0066 OOB and/or XEP-0447 SFS (see ``SharedFile``).
    public var file: SharedFile?

    public init(reply: Reply? = nil, replaces: String? = nil, retractions: [Retraction] = [], moderation: Moderation? = nil,
                reactions: Reactions? = nil, fallbacks: [Fallback] = [], unstyled: Bool = false, store: Bool = false,
                file: SharedFile? = nil) {
        self.reply = reply
        self.replaces = replaces
        self.retractions = retractions
        self.moderation = moderation
        self.reactions = reactions
        self.fallbacks = fallbacks
        self.unstyled = unstyled
        self.store = store
        self.file = file
    }

    /// The retraction to act on: the current form when present (it names the stanza-id), else the legacy one.
    public var retraction: Retraction? {
        retractions.first { if case .current = $0 { true } else { false } } ?? retractions.first
    }

    /// Whether the message refers to another one (so its meaning depends on the message map).
    public var refersToAnother: Bool {
        reply != nil || replaces != nil || !retractions.isEmpty || moderation != nil || reactions != nil
    }

    /// The fallback ranges for `feature` (nil: none declared; `.some(nil)`: the whole body).
    public func fallbackRanges(for feature: String) -> [Range<Int>]?? {
        guard let fallback = fallbacks.first(where: { $0.feature == feature }) else { return nil }
        return .some(fallback.ranges)
    }

    /// Ids longer than this are ignored (a stanza-id is at most 1024 bytes, XEP-0359 leaves it to the room; no real
    /// room uses more than ~100).
    static let maxIDLength = 1024
    /// XEP-0444 sets larger than this are cut (each reaction is one emoji; a hostile set must not fan out into
    /// hundreds of Matrix events).
    public static let maxReactions = 32
    /// Reaction keys longer than this are dropped (Synapse refuses keys over 500 characters).
    public static let maxReactionKeyScalars = 64

    private static func id(_ element: XElement, _ name: String = "id") -> String? {
        guard let value = element[attribute: name], !value.isEmpty, value.utf8.count <= maxIDLength else { return nil }
        return value
    }

    /// Reads the references among a message's extension elements.
    public init(extensions: [XElement]) {
        self.init()
        for element in extensions {
            switch (element.name, element.namespace) {
            case ("reply", XMPPNamespace.reply) where reply == nil:
                if let id = Self.id(element) { reply = Reply(to: element[attribute: "to"].flatMap(JID.init), id: id) }
            case ("replace", XMPPNamespace.correction) where replaces == nil:
                replaces = Self.id(element)
            case ("retract", XMPPNamespace.retraction):
                if let moderated = element.child("moderated", namespace: XMPPNamespace.moderation), let id = Self.id(element) {
                    moderation = Moderation(stanzaID: id, by: moderated[attribute: "by"].flatMap(JID.init),
                                            reason: element.child("reason", namespace: XMPPNamespace.retraction)?.text)
                } else if let id = Self.id(element) {
                    retractions.append(.current(id: id))
                }
            case ("apply-to", XMPPNamespace.fasten):
                guard let id = Self.id(element) else { continue }
                if let moderated = element.child("moderated", namespace: XMPPNamespace.moderationLegacy),
                   moderated.child("retract", namespace: XMPPNamespace.retractionLegacy) != nil {
                    if moderation == nil {
                        moderation = Moderation(stanzaID: id, by: moderated[attribute: "by"].flatMap(JID.init),
                                                reason: moderated.child("reason", namespace: XMPPNamespace.moderationLegacy)?.text)
                    }
                } else if element.child("retract", namespace: XMPPNamespace.retractionLegacy) != nil {
                    retractions.append(.legacy(originID: id))
                }
            case ("reactions", XMPPNamespace.reactions) where reactions == nil:
                guard let id = Self.id(element) else { continue }
                var keys: [String] = []
                for reaction in element.children("reaction", namespace: XMPPNamespace.reactions) {
                    let key = reaction.text
                    guard !key.isEmpty, key.unicodeScalars.count <= Self.maxReactionKeyScalars, !keys.contains(key) else { continue }
                    keys.append(key)
                    if keys.count == Self.maxReactions { break }
                }
                reactions = Reactions(id: id, keys: keys)
            case ("fallback", XMPPNamespace.fallback):
                guard let feature = element[attribute: "for"] else { continue }
                let bodies = element.children("body", namespace: XMPPNamespace.fallback)
                var ranges: [Range<Int>]? = []
                // XEP-0428: an absent start is the body's start, an absent end its end; an unreadable offset voids
                // that range only.
                for body in bodies {
                    let start = body[attribute: "start"], end = body[attribute: "end"]
                    if start == nil, end == nil {
                        ranges = nil   // XEP-0428: a range without offsets covers the whole body
                        break
                    }
                    // One offset missing: the body's start or end. Malformed offsets (not numbers, negative, reversed)
                    // void that range only: they must not turn the whole body into fallback (a reply's own text
                    // would then be removed).
                    guard let lower = start.map(Int.init) ?? 0, let upper = end.map(Int.init) ?? Int.max,
                          lower >= 0, upper >= lower else { continue }
                    ranges?.append(lower..<upper)
                }
                if bodies.isEmpty { ranges = nil }
                fallbacks.append(Fallback(feature: feature, ranges: ranges))
            case ("unstyled", XMPPNamespace.styling):
                unstyled = true
            case ("store", XMPPNamespace.hints):
                store = true
            case ("x", XMPPNamespace.outOfBand), ("file-sharing", XMPPNamespace.fileSharing):
                file = SharedFile(element, merging: file)
            default:
                continue
            }
        }
    }

    /// The elements for an outgoing message, in a stable order.
    public var elements: [XElement] {
        var out: [XElement] = []
        if let reply {
            out.append(XElement("reply", namespace: XMPPNamespace.reply, ["to": reply.to?.description, "id": reply.id]))
        }
        if let replaces { out.append(XElement("replace", namespace: XMPPNamespace.correction, ["id": replaces])) }
        for retraction in retractions {
            switch retraction {
            case .current(let id):
                out.append(XElement("retract", namespace: XMPPNamespace.retraction, ["id": id]))
            case .legacy(let id):
                out.append(XElement("apply-to", namespace: XMPPNamespace.fasten, ["id": id],
                                    children: [.element(XElement("retract", namespace: XMPPNamespace.retractionLegacy))]))
            }
        }
        if let reactions {
            out.append(XElement("reactions", namespace: XMPPNamespace.reactions, ["id": reactions.id],
                                children: reactions.keys.map { .element(XElement("reaction", namespace: XMPPNamespace.reactions, children: [.text($0)])) }))
        }
        for fallback in fallbacks {
            let bodies = (fallback.ranges ?? []).map {
                XNode.element(XElement("body", namespace: XMPPNamespace.fallback, ["start": String($0.lowerBound), "end": String($0.upperBound)]))
            }
            out.append(XElement("fallback", namespace: XMPPNamespace.fallback, ["for": fallback.feature], children: bodies))
        }
        if unstyled { out.append(XElement("unstyled", namespace: XMPPNamespace.styling)) }
        if store { out.append(XElement("store", namespace: XMPPNamespace.hints)) }
        if let file { out += file.elements }
        return out
    }
}

extension Message {
    /// The references among this message's extensions.
    public var references: MessageReferences { MessageReferences(extensions: extensions) }
}

/// A XEP-0425 moderation request: the room is asked to retract the message with this stanza-id for everyone. Sent as
/// an `iq type='set'` to the room's bare JID by an occupant with the moderator role.
public struct ModerationRequest: Sendable, Hashable {
    /// Which wire version the room speaks (its disco#info feature).
    public enum Version: Sendable, Hashable {
        /// `urn:xmpp:message-moderate:1` (XEP-0425 v0.3+).
        case current
        /// `urn:xmpp:message-moderate:0` inside `<apply-to>` (v0.2: prosody-modules' mod_muc_moderation).
        case legacy
    }
    public var stanzaID: String
    public var reason: String?
    public var version: Version

    public init(stanzaID: String, reason: String?, version: Version) {
        self.stanzaID = stanzaID
        self.reason = reason
        self.version = version
    }

    /// The IQ's payload element.
    public var element: XElement {
        switch version {
        case .current:
            var moderate = XElement("moderate", namespace: XMPPNamespace.moderation, ["id": stanzaID])
            moderate.append(XElement("retract", namespace: XMPPNamespace.retraction))
            if let reason { moderate.append(XElement("reason", namespace: XMPPNamespace.moderation, children: [.text(reason)])) }
            return moderate
        case .legacy:
            var moderate = XElement("moderate", namespace: XMPPNamespace.moderationLegacy)
            moderate.append(XElement("retract", namespace: XMPPNamespace.retractionLegacy))
            if let reason { moderate.append(XElement("reason", namespace: XMPPNamespace.moderationLegacy, children: [.text(reason)])) }
            return XElement("apply-to", namespace: XMPPNamespace.fasten, ["id": stanzaID], children: [.element(moderate)])
        }
    }
}
