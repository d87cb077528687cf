import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixAppService
import MatrixClient
import TestSupport
import XCTest

/// The appservice listener against the test bed's real Synapse: delivery, exactly-once, authentication, ping.
final class AppServiceListenerSynapseTests: SynapseListenerTestCase {
    func testMessageFromMatrixUserReachesTheListenerInATransaction() async throws {
        let (alice, aliceID) = try await harness.userClient("alice")
        let room = try await harness.roomWithBot(alice)
        let body = "hello from alice " + UUID().uuidString
        let sent = try await alice.sendMessage(.text(body), to: room, transactionID: ClientTransactionID("t" + UUID().uuidString)!)

        let event = try await harness.handler.waitForEvent { $0.eventID == sent }
        XCTAssertEqual(event.roomID, room)
        XCTAssertEqual(event.sender, aliceID)
        XCTAssertEqual(event.type, MatrixEventType.message)
        guard case .message(let content) = event.content else { return XCTFail("not a message: \(event.content)") }
        XCTAssertEqual(content.messageType, .text)
        XCTAssertEqual(content.body, body)
        // Exactly once, read after a later event arrived: Synapse sends an appservice's transactions in order, so a
        // redelivery of the first would come before it.
        let later = try await alice.sendMessage(.text("sentinel"), to: room, transactionID: ClientTransactionID("t" + UUID().uuidString)!)
        _ = try await harness.handler.waitForEvent { $0.eventID == later }
        XCTAssertEqual(harness.handler.transactions.filter { $0.events.contains { $0.eventID == sent } }.count, 1)
    }

    func testReplayedTransactionDoesNothingAlsoAfterTheStoreIsReopened() async throws {
        let (alice, _) = try await harness.userClient("alice")
        let room = try await harness.roomWithBot(alice)
        let sent = try await alice.sendMessage(.text("replay me"), to: room, transactionID: ClientTransactionID("t" + UUID().uuidString)!)
        _ = try await harness.handler.waitForEvent { $0.eventID == sent }
        let original = try XCTUnwrap(harness.handler.transactions.first { $0.events.contains { $0.eventID == sent } })
        let body = try JSONEncoder().encode(TransactionBody(events: original.events, ephemeral: original.ephemeral))
        let path = "/_matrix/app/v1/transactions/" + PercentEncoding.encode(original.id.rawValue)
        func handledCount() -> Int { harness.handler.transactions.filter { $0.id == original.id }.count }

        let replay = try await RawHTTP.request("PUT", port: harness.bed.appServicePort, path, bearer: harness.bed.hsToken, body: body)
        XCTAssertEqual(replay.status, 200, replay.text)
        XCTAssertEqual(handledCount(), 1, "a replayed transaction reached the handler")

        await harness.stopListener()
        try await harness.startListener(pingAfterwards: false)
        let afterRestart = try await RawHTTP.request("PUT", port: harness.bed.appServicePort, path, bearer: harness.bed.hsToken, body: body)
        XCTAssertEqual(afterRestart.status, 200, afterRestart.text)
        XCTAssertEqual(handledCount(), 1, "a transaction replayed after reopening the store reached the handler")

        let legacy = try await RawHTTP.request("PUT", port: harness.bed.appServicePort, "/transactions/" + PercentEncoding.encode(original.id.rawValue),
                                               bearer: harness.bed.hsToken, body: body)
        XCTAssertEqual(legacy.status, 200, legacy.text)
        XCTAssertEqual(handledCount(), 1)
    }

    func testWrongAndMissingTokensAreRefusedAndTheListenerKeepsWorking() async throws {
        let port = harness.bed.appServicePort
        let body = Data(#"{"events":[]}"#.utf8)
        let path = "/_matrix/app/v1/transactions/auth-\(UUID().uuidString)"

        let wrong = try await RawHTTP.request("PUT", port: port, path, bearer: "not-the-hs-token", body: body)
        XCTAssertEqual(wrong.status, 403)
        XCTAssertEqual(wrong.errcode, "M_FORBIDDEN")
        let missing = try await RawHTTP.request("PUT", port: port, path, body: body)
        XCTAssertEqual(missing.status, 401)
        XCTAssertEqual(missing.errcode, "M_UNAUTHORIZED")
        let wrongQuery = try await RawHTTP.request("PUT", port: port, path + "?access_token=nope", body: body)
        XCTAssertEqual(wrongQuery.status, 403)
        let legacyQuery = try await RawHTTP.request("PUT", port: port, path + "?access_token=" + harness.bed.hsToken, body: body)
        XCTAssertEqual(legacyQuery.status, 200, legacyQuery.text)
        let notJSON = try await RawHTTP.request("PUT", port: port, path + "x", bearer: harness.bed.hsToken, body: Data("{oops".utf8))
        XCTAssertEqual(notJSON.errcode, "M_NOT_JSON")
        let tooLarge = try await RawHTTP.request("PUT", port: port, path + "y", bearer: harness.bed.hsToken,
                                                 body: Data(repeating: UInt8(ascii: " "), count: 17 << 20))
        XCTAssertEqual(tooLarge.status, 413)
        let unknown = try await RawHTTP.request("GET", port: port, "/_matrix/app/v1/nothing", bearer: harness.bed.hsToken)
        XCTAssertEqual(unknown.status, 404)
        XCTAssertEqual(unknown.errcode, "M_UNRECOGNIZED")
        let health = try await RawHTTP.request("GET", port: port, "/health")
        XCTAssertEqual(health.status, 200)

        // Still serving Synapse: a ping round trip and a real message.
        _ = try await harness.client.ping(appServiceID: "isthmus", transactionID: "after-refusals")
        let (alice, _) = try await harness.userClient("alice")
        let room = try await harness.roomWithBot(alice)
        let sent = try await alice.sendMessage(.text("still there?"), to: room, transactionID: ClientTransactionID("t" + UUID().uuidString)!)
        _ = try await harness.handler.waitForEvent { $0.eventID == sent }
    }

    func testPingRoundTripReachesTheListener() async throws {
        let marker = "ping-" + UUID().uuidString
        let roundTrip = try await harness.client.ping(appServiceID: "isthmus", transactionID: marker)
        XCTAssertLessThan(roundTrip, .seconds(10))
        XCTAssertTrue(harness.handler.pings.contains(marker), "the listener did not see the ping \(marker)")
    }

    func testPingFailsPlainlyWhenTheListenerIsDown() async throws {
        await harness.stopListener()
        do {
            _ = try await harness.client.ping(appServiceID: "isthmus")
            XCTFail("ping succeeded without a listener")
        } catch {
            XCTAssertEqual(error.errcode, "M_CONNECTION_FAILED", "\(error)")
            XCTAssertEqual(error.call, .ping)
        }
    }
}
