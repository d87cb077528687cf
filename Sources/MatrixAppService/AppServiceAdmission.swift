import Matrix

/// The appservice listener's decision on a request head, before any body byte is read: route and token through
/// ``AppServiceGate`` (404/405/400, then 401/403, as Matrix JSON), and each route's body limit. Pure.
///
/// Transactions may be large (Synapse sends up to ~100 events of ≤ 64 KiB each); a query or ping body never needs
/// more than ``maxOtherBodyBytes``; the health probe takes no body. A request that presented the `hs_token`
/// authenticates its connection.
struct AppServiceAdmission: Sendable {
    /// Body limit of every route but transactions.
    static let maxOtherBodyBytes = 64 << 10

    let gate: AppServiceGate
    /// Body limit of `PUT /transactions/{txnId}`.
    let maxTransactionBytes: Int

    /// Admits or refuses `head`.
    func decide(_ head: HTTPRequestHead) -> HTTPAdmission {
        let request = AppServiceRequest(method: head.method, path: head.path, query: head.query,
                                        authorization: head.headers["authorization"])
        switch gate.decide(request) {
        case .reject(let rejection):
            return .refuse(.matrixError(rejection), reason: Self.reason(rejection))
        case .serve(let route):
            return .admit(maxBodyBytes: maxBodyBytes(route), authenticated: route.requiresAuthentication)
        }
    }

    /// The body limit of `route`.
    func maxBodyBytes(_ route: AppServiceRoute) -> Int {
        switch route {
        case .transaction: maxTransactionBytes
        case .health, .media: 0
        case .userQuery, .roomAliasQuery, .ping, .provisioning, .thirdPartyProtocol, .thirdPartyLocation, .thirdPartyUser: Self.maxOtherBodyBytes
        }
    }

    /// The refusal's name in the rate-limited log.
    static func reason(_ rejection: AppServiceRejection) -> String {
        switch rejection.status {
        case 401: "missing_token"
        case 403: "wrong_token"
        case 404: "unknown_path"
        case 405: "wrong_method"
        case 400: "invalid_parameter"
        default: "status_\(rejection.status)"
        }
    }
}
