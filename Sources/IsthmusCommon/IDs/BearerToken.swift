/// A secret a Matrix client presents or trades: an access token (`Authorization: Bearer`) or a refresh token.
/// Never printed: ``description`` shows only a fingerprint, the first 8 hex digits of the token's SHA-256, so logs,
/// errors and test failures can tell two tokens apart without revealing either. Coded in JSON as the bare string.
public protocol BearerToken: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The token itself: only for the request that carries it and the store that keeps it.
    var secret: String { get }
    /// Accepts a non-empty token of printable ASCII without spaces (what a header can carry), at most 4096 bytes.
    init?(_ secret: String)
}

extension BearerToken {
    public var description: String { "\(Self.self)(sha256:\(Digest.hex(Digest.sha256(Array(secret.utf8)).prefix(4))))" }
    public var debugDescription: String { description }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a usable \(Self.self)"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(secret)
    }

    /// The shared check of ``init(_:)``.
    static func isUsable(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 4096 && text.utf8.allSatisfy { (0x21...0x7e).contains($0) }
    }
}

/// A Matrix access token: what every authenticated call carries.
public struct AccessToken: BearerToken {
    public let secret: String
    public init?(_ secret: String) {
        guard Self.isUsable(secret) else { return nil }
        self.secret = secret
    }
}

/// A Matrix refresh token (client-server API §"Refreshing access tokens"): traded once for a new access token and,
/// usually, a new refresh token.
public struct RefreshToken: BearerToken {
    public let secret: String
    public init?(_ secret: String) {
        guard Self.isUsable(secret) else { return nil }
        self.secret = secret
    }
}
