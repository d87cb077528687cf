import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
@testable import MatrixAppService
import TestSupport
import Testing

/// The standby of an active/standby pair: every route but the health probe answers 503 (Matrix JSON, `Retry-After`)
/// and reaches no handler, until it becomes the active instance.
@Suite struct AppServiceListenerStandbyTests {
    static let token = "hs-secret"

    @Test func aStandbyAnswers503UntilItBecomesActive() async throws {
        let store = try Store(path: ":memory:", logger: .disabled)
        let handler = RecordingAppServiceHandler(knownUsers: [UserID("@_xmpp_a:localhost")!])
        handler.use(store)
        var configuration = AppServiceListener.Configuration(host: "127.0.0.1", port: 0, hsToken: Self.token)
        configuration.standby = true
        let listener = try AppServiceListener(configuration: configuration, handler: handler, logger: .disabled)
        #expect(listener.isStandby)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await listener.run() }
            defer { listener.shutdown() }
            let port = listener.port
            let body = AppServiceListenerLoopbackTests.transactionBody(["$1"])
            let path = "/_matrix/app/v1/transactions/1"

            let refused = try await RawHTTP.request("PUT", port: port, path, bearer: Self.token, body: body)
            #expect(refused.status == 503)
            #expect(refused.errcode == "M_UNKNOWN")
            let query = try await RawHTTP.request("GET", port: port, "/_matrix/app/v1/users/%40_xmpp_a%3Alocalhost", bearer: Self.token)
            #expect(query.status == 503, "queries wait for the active instance too")
            #expect(try await RawHTTP.request("GET", port: port, "/_isthmus/health").status == 200)
            // A stranger is still refused for what it is, before the standby's answer.
            #expect(try await RawHTTP.request("PUT", port: port, path, bearer: "wrong", body: body).status == 403)
            #expect(handler.transactions.isEmpty)
            #expect(try await store.isTransactionProcessed(TransactionID("1")!) == false, "a standby records nothing")

            listener.becomeActive()
            #expect(!listener.isStandby)
            #expect(try await RawHTTP.request("PUT", port: port, path, bearer: Self.token, body: body).status == 200)
            #expect(handler.transactions.map(\.id.rawValue) == ["1"])
            #expect(try await RawHTTP.request("GET", port: port, "/_matrix/app/v1/users/%40_xmpp_a%3Alocalhost", bearer: Self.token).status == 200)
        }
    }

    @Test func theStandbyAnswerCarriesRetryAfter() {
        #expect(AppServiceListener.standbyResponse.status == 503)
        #expect(AppServiceListener.standbyResponse.headers["Retry-After"] == "1")
    }
}
