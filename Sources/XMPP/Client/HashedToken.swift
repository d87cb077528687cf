import IsthmusCommon

/// A Hashed Token SASL mechanism (draft-schmaus-kitten-sasl-ht-08 §3, the one XEP-0484 FAST names):
/// `HT-<hash>-<cb-type>`. Only SHA-256 is implemented (what servers offer); the channel binding is `NONE` or one the
/// TLS connection can compute (`ENDP` = tls-server-end-point, `EXPR` = tls-exporter). `UNIQ` (tls-unique) is not.
public struct HashedTokenMechanism: Sendable, Hashable, CustomStringConvertible {
    /// The channel binding mixed into the hashes; nil for `-NONE`.
    public var binding: ChannelBindingType?

    public init(binding: ChannelBindingType?) { self.binding = binding }

    /// nil unless `name` is `HT-SHA-256-NONE`, `-ENDP` or `-EXPR`.
    public init?(_ name: SASLMechanismName) {
        guard let suffix = Self.suffixes.first(where: { "HT-SHA-256-" + $0.suffix == name.rawValue }) else { return nil }
        binding = suffix.binding
    }

    /// The mechanism's name, as offered in `<fast>` and sent in `<authenticate mechanism>`.
    public var name: SASLMechanismName {
        SASLMechanismName("HT-SHA-256-" + Self.suffixes.first { $0.binding == binding }!.suffix)!
    }

    public var description: String { name.rawValue }

    /// Which of the server's FAST mechanisms to ask a token for: the strongest binding this TLS channel gives
    /// (tls-exporter, then tls-server-end-point), else none. A token is pinned to its mechanism by the server
    /// (XEP-0484 §4.4), so a later connection that cannot compute the same binding falls back to the password.
    public static func strongest(offered: [SASLMechanismName], bindingData: [ChannelBindingType: [UInt8]]) -> HashedTokenMechanism? {
        let usable = offered.compactMap(HashedTokenMechanism.init).filter { $0.binding.map { bindingData[$0] != nil } ?? true }
        return [ChannelBindingType.tlsExporter, .tlsServerEndPoint, nil].lazy.compactMap { binding in
            usable.first { $0.binding == binding }
        }.first
    }

    private static let suffixes: [(suffix: String, binding: ChannelBindingType?)] = [
        ("NONE", nil), ("ENDP", .tlsServerEndPoint), ("EXPR", .tlsExporter),
    ]
}

/// The client side of one HT exchange (draft-schmaus-kitten-sasl-ht-08 §4): one message each way. A value without I/O,
/// beside ``SCRAMClient``: send ``initialResponse()``, give the server's success data to ``receive(responderMessage:)``.
/// The token is the HMAC key (its UTF-8 bytes); it never leaves this value otherwise.
public struct HashedTokenClient: Sendable {
    public let mechanism: HashedTokenMechanism
    private let username: String
    private let token: [UInt8]
    private let bindingData: [UInt8]
    /// Whether the server proved it knows the token (its responder message verified).
    public private(set) var isAuthenticated = false

    /// `bindingData`: the channel-binding data of the mechanism's type (empty for `-NONE`). Throws
    /// `.invalidUsername` for an empty name or one with NUL (the message separates the name from the hash by NUL).
    public init(mechanism: HashedTokenMechanism, username: String, token: String, bindingData: [UInt8]) throws(HashedTokenError) {
        guard !username.isEmpty, !username.utf8.contains(0) else { throw .invalidUsername }
        self.mechanism = mechanism
        self.username = username
        self.token = Array(token.utf8)
        self.bindingData = bindingData
    }

    /// initiator-msg = authcid NUL HMAC(token, "Initiator" || cb-data) (§4.1).
    public func initialResponse() -> [UInt8] {
        Array(username.utf8) + [0] + Digest.hmac(.sha256, key: token, message: Array("Initiator".utf8) + bindingData)
    }

    /// Checks responder-msg = HMAC(token, "Responder" || cb-data) (§4.3), compared in constant time: the initiator MUST
    /// verify it for mutual authentication.
    public mutating func receive(responderMessage message: [UInt8]) throws(HashedTokenError) {
        let expected = Digest.hmac(.sha256, key: token, message: Array("Responder".utf8) + bindingData)
        guard Digest.constantTimeEqual(message, expected) else { throw .responderMismatch }
        isAuthenticated = true
    }
}

/// Why an HT exchange failed on our side.
public enum HashedTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The user name is empty or contains NUL.
    case invalidUsername
    /// The server's success data is not HMAC(token, "Responder" || cb-data): it does not know the token.
    case responderMismatch

    public var description: String {
        switch self {
        case .invalidUsername: "the user name is empty or contains a NUL character"
        case .responderMismatch: "the server's answer to the FAST token is wrong: it does not know the token (possible impostor)"
        }
    }
}
