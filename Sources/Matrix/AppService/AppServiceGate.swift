/// The listener's decision for one request, before any body is decoded: route, then authentication, then size.
/// Pure; no sockets, no clock.
public struct AppServiceGate: Sendable {
    /// What to do with a request.
    public enum Decision: Sendable, Equatable {
        /// Serve `route` (the body, if any, still has to be decoded).
        case serve(AppServiceRoute)
        /// Answer with this error and do nothing else.
        case reject(AppServiceRejection)
    }

    private let authorization: AppServiceAuthorization
    /// The provisioning API's token check; nil: the API is off (its paths are unknown).
    private let provisioning: AppServiceAuthorization?

    public init(hsToken: String, provisioningSecret: String? = nil) {
        authorization = AppServiceAuthorization(hsToken: hsToken)
        provisioning = provisioningSecret.map { AppServiceAuthorization(hsToken: $0) }
    }

    /// Decides what to do with `request`. The health probe needs no token; provisioning routes need the provisioning
    /// secret (and are unknown paths while it is not configured); every other route needs the hs_token.
    public func decide(_ request: AppServiceRequest) -> Decision {
        let route: AppServiceRoute
        switch AppServiceRouter.route(method: request.method, path: request.path) {
        case .failure(let rejection): return .reject(rejection)
        case .success(let found): route = found
        }
        if case .provisioning = route {
            guard let provisioning else { return .reject(.unknownPath) }
            switch provisioning.check(request) {
            case .accepted: break
            case .missing: return .reject(.missingToken)
            case .wrong: return .reject(.wrongProvisioningToken)
            }
        } else if route.requiresAuthentication {
            switch authorization.check(request) {
            case .accepted: break
            case .missing: return .reject(.missingToken)
            case .wrong: return .reject(.wrongToken)
            }
        }
        if request.bodyTooLarge { return .reject(.tooLarge) }
        return .serve(route)
    }
}
