/// A Matrix device id: one client's device on its account (client-server API §"Relationship between access tokens and
/// devices"). Logging in again with the same id keeps the device — and the scope of its transaction ids — while
/// invalidating its older tokens. Any printable id is accepted (a homeserver may hand out others); the ones Isthmus makes
/// also fit OAuth 2.0's device scope.
public struct DeviceID: StringIdentifier {
    public let rawValue: String

    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 255, MatrixIdentifier.isPrintable(text) else { return nil }
        rawValue = text
    }

    /// Whether the id can also name the device under OAuth 2.0 (next-generation auth): the client picks it, at least 10
    /// characters from `[A-Za-z0-9-._~]` (spec §"Scope", `urn:matrix:client:device:<device id>`).
    public var isOAuthCompatible: Bool {
        rawValue.utf8.count >= 10 && rawValue.unicodeScalars.allSatisfy(Self.isOAuthCharacter)
    }

    /// One of OAuth 2.0's device-id characters, `[A-Za-z0-9-._~]` (RFC 3986's unreserved set).
    public static func isOAuthCharacter(_ scalar: Unicode.Scalar) -> Bool {
        ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) || "-._~".unicodeScalars.contains(scalar)
    }

    /// A new id for the bridge's account, `ISTHMUS` and 8 random hex digits (15 characters, OAuth-compatible): made once,
    /// at the first login, then kept with the session. Reads OpenSSL's CSPRNG.
    public static func generated() -> DeviceID {
        DeviceID("ISTHMUS" + Digest.randomHex(bytes: 4).uppercased())!
    }
}
