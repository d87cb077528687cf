import IsthmusCommon

/// Checks the homeserver's `hs_token` (appservice API v1.17 §2.2 "Authorization"). Pure; compares in constant time.
///
/// The token comes from `Authorization: Bearer <token>` or, for homeservers older than v1.4, `?access_token=`.
/// No token → 401 `M_UNAUTHORIZED`; a wrong one → 403 `M_FORBIDDEN`.
public struct AppServiceAuthorization: Sendable {
    /// The outcome of a check.
    public enum Outcome: Sendable, Equatable {
        case accepted
        case missing
        case wrong
    }

    private let hsToken: String

    public init(hsToken: String) { self.hsToken = hsToken }

    /// Checks the token presented by `request`.
    public func check(_ request: AppServiceRequest) -> Outcome {
        guard let token = Self.presentedToken(request) else { return .missing }
        return Digest.constantTimeEqual(token, hsToken) ? .accepted : .wrong
    }

    /// The bearer token of the `Authorization` header, else the decoded `access_token` query value.
    static func presentedToken(_ request: AppServiceRequest) -> String? {
        if let header = request.authorization, let token = bearerToken(header) { return token }
        guard let raw = request.query.first(where: { $0.name == "access_token" })?.value,
              let token = PercentEncoding.decode(raw), !token.isEmpty else { return nil }
        return token
    }

    /// `Bearer <token>` (scheme case-insensitive, RFC 7235 §2.1); nil for other schemes or an empty token.
    static func bearerToken(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].drop(while: { $0 == " " })
        var end = token.endIndex
        while end > token.startIndex, token[token.index(before: end)] == " " { end = token.index(before: end) }
        let trimmed = token[..<end]
        return trimmed.isEmpty ? nil : String(trimmed)
    }
}
