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

    public init(hsToken: String) { authorization = AppServiceAuthorization(hsToken: hsToken) }

    /// Decides what to do with `request`. The health probe needs no token; every other route does.
    public func decide(_ request: AppServiceRequest) -> Decision {
        let route: AppServiceRoute
        switch AppServiceRouter.route(method: request.method, path: request.path) {
        case .failure(let rejection): return .reject(rejection)
        case .success(let found): route = found
        }
        if route.requiresAuthentication {
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
