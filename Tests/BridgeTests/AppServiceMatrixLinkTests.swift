@testable import Bridge
import MatrixClient
import Testing

/// How the bridge's Matrix link sorts client failures: what waits (nothing lost) and what is refused for good.
@Suite struct AppServiceMatrixLinkTests {
    func error(_ kind: MatrixError.Kind, status: Int? = nil, message: String = "m") -> MatrixError {
        MatrixError(kind: kind, call: "send", endpoint: "PUT /send", status: status, message: message, attempts: 1)
    }

    @Test func anUnacceptedCertificateMakesMessagesWaitAndSaysWhy() {
        let classified = AppServiceMatrixLink.classify(error(.unusable, message: "certificate of hs.example not accepted: expired"))
        #expect(classified as? MatrixLinkError == .unavailable("certificate of hs.example not accepted: expired"))
    }

    @Test func outagesWaitAndRefusalsAreFinal() {
        #expect(AppServiceMatrixLink.classify(error(.transport)) is MatrixLinkError)
        #expect(AppServiceMatrixLink.classify(error(.homeserver, status: 502)) is MatrixLinkError)
        #expect(AppServiceMatrixLink.classify(error(.homeserver, status: 403)) is MatrixError)
    }
}
