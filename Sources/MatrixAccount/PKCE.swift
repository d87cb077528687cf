import FoundationEssentials
import IsthmusCommon

/// Proof Key for Code Exchange (RFC 7636) with the `S256` method, which the client-server API requires for the
/// authorization code grant: a random verifier kept by the client, and its challenge sent with the authorization
/// request. Pure apart from the random verifier.
public struct PKCE: Sendable, Equatable {
    /// 64 characters from the unreserved set (RFC 7636 §4.1 allows 43–128): 32 random bytes, hex-encoded.
    public let verifier: String
    /// BASE64URL(SHA256(verifier)), without padding (§4.2).
    public var challenge: String { Self.challenge(of: verifier) }
    public let method = "S256"

    public init(verifier: String = Digest.randomHex(bytes: 32)) {
        self.verifier = verifier
    }

    static func challenge(of verifier: String) -> String {
        String(Data(Digest.sha256(Array(verifier.utf8))).base64EncodedString().compactMap { character -> Character? in
            switch character {
            case "+": "-"
            case "/": "_"
            case "=": nil
            default: character
            }
        })
    }
}
