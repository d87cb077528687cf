import Matrix
@testable import MatrixAppService
import Testing

/// The listener's decision on a request head alone (no body, no socket): route, token, body limit.
@Suite struct AppServiceAdmissionTests {
    let admission = AppServiceAdmission(gate: AppServiceGate(hsToken: "secret"), maxTransactionBytes: 16 << 20)

    func decide(_ method: String, _ path: String, authorization: String? = nil, query: [AppServiceRequest.QueryItem] = []) -> HTTPAdmission {
        admission.decide(HTTPRequestHead(method: method, path: path, query: query,
                                         headers: authorization.map { ["authorization": $0] } ?? [:]))
    }

    func refusal(_ decision: HTTPAdmission) -> (status: Int, reason: String)? {
        guard case .refuse(let response, let reason) = decision else { return nil }
        return (response.status, reason)
    }

    @Test func strangersAreRefusedOnTheHeadWithMatrixJSON() {
        let path = "/_matrix/app/v1/transactions/1"
        #expect(refusal(decide("PUT", path))! == (401, "missing_token"))
        #expect(refusal(decide("PUT", path, authorization: "Bearer nope"))! == (403, "wrong_token"))
        #expect(refusal(decide("PUT", path, query: [.init(name: "access_token", value: "nope")]))! == (403, "wrong_token"))
        #expect(refusal(decide("GET", "/nowhere", authorization: "Bearer secret"))! == (404, "unknown_path"))
        #expect(refusal(decide("DELETE", path, authorization: "Bearer secret"))! == (405, "wrong_method"))
        #expect(refusal(decide("PUT", "/_matrix/app/v1/transactions/%ZZ", authorization: "Bearer secret"))! == (400, "invalid_parameter"))
        guard case .refuse(let response, _) = decide("PUT", path) else { Issue.record(); return }
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self).contains(#""errcode":"M_UNAUTHORIZED""#))
    }

    @Test func eachRouteGetsItsBodyLimitAndTheTokenEitherWay() {
        #expect(decide("PUT", "/_matrix/app/v1/transactions/1", authorization: "Bearer secret") == .admit(maxBodyBytes: 16 << 20, authenticated: true))
        #expect(decide("PUT", "/transactions/1", query: [.init(name: "access_token", value: "secret")])
                == .admit(maxBodyBytes: 16 << 20, authenticated: true))
        #expect(decide("POST", "/_matrix/app/v1/ping", authorization: "Bearer secret") == .admit(maxBodyBytes: 64 << 10, authenticated: true))
        #expect(decide("GET", "/_matrix/app/v1/users/@_xmpp_a:localhost", authorization: "Bearer secret")
                == .admit(maxBodyBytes: 64 << 10, authenticated: true))
        #expect(decide("GET", "/rooms/%23a:localhost", authorization: "Bearer secret") == .admit(maxBodyBytes: 64 << 10, authenticated: true))
        #expect(decide("GET", "/health") == .admit(maxBodyBytes: 0, authenticated: false))
    }
}
