import Matrix
@testable import MatrixAppService
import Testing

/// The provisioning API's routes on the listener's head check: off without a secret, its own token, nothing told to
/// strangers, a small body limit.
@Suite struct ProvisioningRoutingTests {
    let on = AppServiceAdmission(gate: AppServiceGate(hsToken: "hs-secret", provisioningSecret: "provisioning-secret-1"),
                                 maxTransactionBytes: 16 << 20)
    let off = AppServiceAdmission(gate: AppServiceGate(hsToken: "hs-secret"), maxTransactionBytes: 16 << 20)

    func decide(_ admission: AppServiceAdmission, _ method: String, _ path: String, token: String? = "provisioning-secret-1") -> HTTPAdmission {
        admission.decide(HTTPRequestHead(method: method, path: path, headers: token.map { ["authorization": "Bearer \($0)"] } ?? [:]))
    }

    func status(_ decision: HTTPAdmission) -> Int? {
        guard case .refuse(let response, _) = decision else { return nil }
        return response.status
    }

    @Test func routesWithTheProvisioningTokenAndA64KiBLimit() {
        let admitted = HTTPAdmission.admit(maxBodyBytes: 64 << 10, authenticated: true)
        #expect(decide(on, "GET", "/_isthmus/provision/v1/links") == admitted)
        #expect(decide(on, "POST", "/_isthmus/provision/v1/links") == admitted)
        #expect(decide(on, "DELETE", "/_isthmus/provision/v1/links/%21room%3Alocalhost") == admitted)
        #expect(AppServiceRouter.route(method: "DELETE", path: "/_isthmus/provision/v1/links/%21room%3Alocalhost")
                == .success(.provisioning(.deleteLink(rawRoom: "%21room%3Alocalhost"))))
        #expect(AppServiceRouter.route(method: "POST", path: "/_isthmus/provision/v1/links") == .success(.provisioning(.createLink)))
    }

    @Test func withoutASecretTheAPIIsNotThere() {
        #expect(status(decide(off, "GET", "/_isthmus/provision/v1/links")) == 404)
        #expect(status(decide(off, "GET", "/_isthmus/provision/v1/links", token: "hs-secret")) == 404)
        #expect(status(decide(off, "DELETE", "/_isthmus/provision/v1/links/%21room%3Alocalhost", token: nil)) == 404)
    }

    @Test func strangersLearnNothingAboutLinks() {
        // The same answer whatever the room, valid or not, linked or not: the token is checked before anything else.
        for path in ["/_isthmus/provision/v1/links/%21linked%3Alocalhost", "/_isthmus/provision/v1/links/%21other%3Alocalhost",
                     "/_isthmus/provision/v1/links/not-a-room", "/_isthmus/provision/v1/links/%ZZ"] {
            #expect(status(decide(on, "DELETE", path, token: nil)) == 401, "\(path)")
            #expect(status(decide(on, "DELETE", path, token: "wrong")) == 403, "\(path)")
        }
        #expect(status(decide(on, "GET", "/_isthmus/provision/v1/links", token: "hs-secret")) == 403, "the hs_token is not the secret")
        #expect(status(decide(on, "POST", "/_matrix/app/v1/ping", token: "provisioning-secret-1")) == 403, "nor the other way round")
    }

    @Test func unknownPathsAndMethods() {
        #expect(status(decide(on, "GET", "/_isthmus/provision/v1/other")) == 404)
        #expect(status(decide(on, "GET", "/_isthmus/provision/v2/links")) == 404)
        #expect(status(decide(on, "PUT", "/_isthmus/provision/v1/links")) == 405)
        #expect(status(decide(on, "GET", "/_isthmus/provision/v1/links/%21room%3Alocalhost")) == 405)
    }
}
