import XMLStream

/// What a server offers on a client stream (`<stream:features>`, RFC 6120 §4.3.2), read once into types: the c2s
/// machine decides from this value, never from the XML.
public struct StreamFeatures: Sendable, Hashable {
    /// STARTTLS offered (RFC 6120 §5); `required` when the server will not go on without it.
    public var startTLS: StartTLS?
    /// SASL mechanisms offered (RFC 6120 §6), in the server's order; names that are not valid are left out.
    public var mechanisms: [SASLMechanismName] { offer.mechanisms.compactMap { SASLMechanismName(rawValue: $0) } }
    /// The channel-binding types the server announces (XEP-0440) that the bridge can compute; nil when it announces none.
    public var channelBindings: Set<ChannelBindingType>? { offer.channelBindingTypes.map { Set($0.compactMap { ChannelBindingType(rawValue: $0) }) } }
    /// Everything legacy SASL advertises, exactly as written: XEP-0474 hashes what the server sent, names the bridge
    /// does not know included. (SASL2's mechanisms are in ``sasl2``'s own offer.)
    public var offer: SASLOffer
    /// Resource binding offered (after authentication).
    public var bind: Bool
    /// XEP-0198 stream management offered (after authentication and bind).
    public var streamManagement: Bool
    /// SASL2 (XEP-0388) offered, with what it can do inline.
    public var sasl2: SASL2?

    /// STARTTLS, and whether the server insists on it.
    public struct StartTLS: Sendable, Hashable {
        public var required: Bool

        public init(required: Bool) { self.required = required }
    }

    /// XEP-0388's `<authentication>`: its mechanisms and what can be done inside the authentication.
    public struct SASL2: Sendable, Hashable {
        /// The mechanisms exactly as written, with the XEP-0440 channel-binding types (what XEP-0474 hashes).
        public var offer: SASLOffer
        /// XEP-0386 Bind2 inline.
        public var bind2: Bool
        /// XEP-0198 can be enabled inside the Bind2 request (`<feature var='urn:xmpp:sm:3'/>` in Bind2's `<inline>`).
        public var bind2StreamManagement: Bool
        /// XEP-0198 resumption inline (`<sm/>` in SASL2's `<inline>`).
        public var streamManagement: Bool
        /// XEP-0484 FAST: the token mechanisms offered, empty when FAST is not.
        public var fastMechanisms: [SASLMechanismName]

        /// The offered mechanisms whose names are valid.
        public var mechanisms: [SASLMechanismName] { offer.mechanisms.compactMap { SASLMechanismName(rawValue: $0) } }

        public init(offer: SASLOffer, bind2: Bool, bind2StreamManagement: Bool = false, streamManagement: Bool,
                    fastMechanisms: [SASLMechanismName]) {
            self.offer = offer
            self.bind2 = bind2
            self.bind2StreamManagement = bind2StreamManagement
            self.streamManagement = streamManagement
            self.fastMechanisms = fastMechanisms
        }
    }

    /// Reads the features element; what is not understood is left out (servers add features freely).
    public init(element: XElement) throws(StanzaParseError) {
        guard element.name == "features", element.namespace == XMPPNamespace.streams else {
            throw StanzaParseError(element: "features", .unexpectedElement(name: element.name, namespace: element.namespace))
        }
        startTLS = element.child("starttls", namespace: XMPPNamespace.tls).map {
            StartTLS(required: $0.child("required", namespace: XMPPNamespace.tls) != nil)
        }
        let channelBindingTypes = element.child("sasl-channel-binding", namespace: XMPPNamespace.saslChannelBinding).map { list in
            list.children("channel-binding", namespace: XMPPNamespace.saslChannelBinding).compactMap { $0[attribute: "type"] }
        }
        offer = SASLOffer(mechanisms: element.child("mechanisms", namespace: XMPPNamespace.sasl).map(Self.mechanisms) ?? [],
                          channelBindingTypes: channelBindingTypes)
        bind = element.child("bind", namespace: XMPPNamespace.bind) != nil
        streamManagement = element.child("sm", namespace: XMPPNamespace.streamManagement) != nil
        sasl2 = element.child("authentication", namespace: XMPPNamespace.sasl2).map { authentication in
            let inline = authentication.child("inline", namespace: XMPPNamespace.sasl2)
            let bind2 = inline?.child("bind", namespace: XMPPNamespace.bind2)
            let bind2Features = bind2?.child("inline", namespace: XMPPNamespace.bind2)?
                .children("feature", namespace: XMPPNamespace.bind2).compactMap { $0[attribute: "var"] } ?? []
            return SASL2(
                offer: SASLOffer(mechanisms: Self.mechanisms(authentication), channelBindingTypes: channelBindingTypes),
                bind2: bind2 != nil, bind2StreamManagement: bind2Features.contains(XMPPNamespace.streamManagement),
                streamManagement: inline?.child("sm", namespace: XMPPNamespace.streamManagement) != nil,
                fastMechanisms: inline?.child("fast", namespace: XMPPNamespace.fast).map { Self.mechanisms($0).compactMap { SASLMechanismName(rawValue: $0) } } ?? [])
        }
    }

    /// The `<mechanism>` children of `element` in its own namespace, without surrounding white space.
    private static func mechanisms(_ element: XElement) -> [String] {
        element.children("mechanism", namespace: element.namespace).map { mechanism in
            mechanism.text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }
    }
}

/// A SASL mechanism's name as the server writes it (RFC 4422 §3.1: 1–20 of `A-Z 0-9 - _`).
public struct SASLMechanismName: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String

    /// nil unless `rawValue` is a valid mechanism name.
    public init?(rawValue: String) {
        guard (1...20).contains(rawValue.utf8.count),
              rawValue.utf8.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F }) else {
            return nil
        }
        self.rawValue = rawValue
    }

    /// nil unless `name` is a valid mechanism name.
    public init?(_ name: String) { self.init(rawValue: name) }

    public var description: String { rawValue }

    public static let plain = Self("PLAIN")!
}
