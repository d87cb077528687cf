/// Which SASL mechanism the bridge's account authenticates with, chosen from what the server offers (RFC 6120 §6,
/// XEP-0440). Strongest first: SCRAM-SHA-256-PLUS, SCRAM-SHA-1-PLUS (bound to the TLS channel with `tls-exporter`
/// when usable, else `tls-server-end-point`), then SCRAM-SHA-256, SCRAM-SHA-1, and PLAIN only inside TLS.
public enum SASLChoice: Sendable, Hashable {
    /// A SCRAM exchange with this hash and this channel binding.
    case scram(SCRAMHash, binding: Binding)
    /// PLAIN (RFC 4616): the password in the clear, so only inside TLS.
    case plain

    /// What the SCRAM exchange says about channel binding (its GS2 flag; the data comes from the TLS connection).
    public enum Binding: Sendable, Hashable {
        /// `n`: no binding (no TLS, or the server's binding types are not ones we can compute).
        case none
        /// `y`: we could bind, but the server offered no `-PLUS` mechanism (a server that can would see a MITM).
        case notOfferedByServer
        /// `p=<type>`: bound to the TLS channel.
        case bound(ChannelBindingType)
    }

    /// The TLS channel the exchange would run in.
    public struct Channel: Sendable, Hashable {
        /// Whether the `tls-exporter` binding is defined on this connection (TLS 1.3, or TLS 1.2 with the extended
        /// master secret; RFC 9266).
        public var exporterUsable: Bool

        public init(exporterUsable: Bool) { self.exporterUsable = exporterUsable }
    }

    /// The mechanism name to send.
    public var mechanismName: SASLMechanismName {
        switch self {
        case .scram(let hash, let binding):
            let plus = if case .bound = binding { true } else { false }
            return SASLMechanismName(hash.mechanismName(plus: plus))!
        case .plain:
            return .plain
        }
    }

    /// The strongest mechanism both sides can use. `channelBindings`: the types of the server's XEP-0440 list that we
    /// can compute, nil when it sent no list; `channel` is nil without TLS; `sasl2`: the offer came in SASL2's
    /// `<authentication>`, where XEP-0440 makes a binding offer without a list of types (or types we could bind with
    /// but no `-PLUS` mechanism) a sign of tampering.
    public static func choose(offered: [SASLMechanismName], channelBindings: Set<ChannelBindingType>?, channel: Channel?,
                              sasl2: Bool) throws(SASLChoiceError) -> SASLChoice {
        let names = Set(offered.map(\.rawValue))
        let hashes: [SCRAMHash] = [.sha256, .sha1]
        let plusOffered = hashes.contains { names.contains($0.mechanismName(plus: true)) }
        if let channel {
            // The list's absence is the sign (a server that announces only types we cannot compute, e.g. tls-unique,
            // did announce: we go on unbound, with `n`).
            if sasl2, plusOffered, channelBindings == nil { throw .channelBindingNotAnnounced }
            if sasl2, !plusOffered, let announced = channelBindings, !announced.isEmpty { throw .plusMechanismsMissing }
            // Without XEP-0440's list, `tls-server-end-point` is the one every server must support.
            let announced = channelBindings ?? [.tlsServerEndPoint]
            let usable: [ChannelBindingType] = (channel.exporterUsable ? [.tlsExporter] : []) + [.tlsServerEndPoint]
            if let type = usable.first(where: announced.contains) {
                for hash in hashes where names.contains(hash.mechanismName(plus: true)) {
                    return .scram(hash, binding: .bound(type))
                }
            }
            for hash in hashes where names.contains(hash.mechanismName(plus: false)) {
                return .scram(hash, binding: plusOffered ? .none : .notOfferedByServer)
            }
            if names.contains(SASLMechanismName.plain.rawValue) { return .plain }
        } else {
            for hash in hashes where names.contains(hash.mechanismName(plus: false)) {
                return .scram(hash, binding: .none)
            }
            if names.contains(SASLMechanismName.plain.rawValue) { throw .plainWithoutTLS }
        }
        throw .noUsableMechanism(offered)
    }
}

/// Why the bridge will not authenticate with what the server offers.
public enum SASLChoiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// None of SCRAM-SHA-256(-PLUS), SCRAM-SHA-1(-PLUS), PLAIN is offered.
    case noUsableMechanism([SASLMechanismName])
    /// Only PLAIN is offered and the stream is not encrypted: the password would go in the clear.
    case plainWithoutTLS
    /// SASL2 offers `-PLUS` mechanisms but announces no channel-binding type (XEP-0440: possible tampering).
    case channelBindingNotAnnounced
    /// SASL2 announces channel-binding types but offers no `-PLUS` mechanism (XEP-0440: possible tampering).
    case plusMechanismsMissing

    public var description: String {
        switch self {
        case .noUsableMechanism(let offered):
            "the server offers no SASL mechanism the bridge can use (offered: \(offered.isEmpty ? "none" : offered.map(\.rawValue).joined(separator: ", ")); "
                + "it needs SCRAM-SHA-256, SCRAM-SHA-1 or, over TLS, PLAIN)"
        case .plainWithoutTLS:
            "the server offers only PLAIN on an unencrypted stream; the bridge will not send the password in the clear"
        case .channelBindingNotAnnounced:
            "the server offers channel-bound mechanisms (-PLUS) but announces no binding type: the offer may have been tampered with"
        case .plusMechanismsMissing:
            "the server announces channel-binding types but offers no -PLUS mechanism: the offer may have been tampered with"
        }
    }
}
