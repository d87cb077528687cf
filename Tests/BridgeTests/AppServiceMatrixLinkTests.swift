@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusFakes
import Matrix
import MatrixClient
import Testing

/// How the bridge's Matrix link sorts client failures: what waits (nothing lost) and what is refused for good.
@Suite struct AppServiceMatrixLinkTests {
    func error(_ kind: MatrixError.Kind, status: Int? = nil, message: String = "m") -> MatrixError {
        MatrixError(kind: kind, call: .send, endpoint: "PUT /send", status: status, message: message, attempts: 1)
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

    /// A locked account (401 `M_USER_LOCKED`, soft logout) is unlocked by an administrator, not refused for good: its
    /// messages wait.
    @Test func aLockedAccountsMessagesWait() {
        var locked = error(.homeserver, status: 401, message: "User account has been locked")
        locked.errcode = .userLocked
        locked.softLogout = true
        #expect(AppServiceMatrixLink.classify(locked) as? MatrixLinkError
                == .unavailable("the homeserver locked the bridge's Matrix account: User account has been locked"))
    }

    /// Found by scripts/chaos (seed 4711): a ghost that must be invited before it joins, while the homeserver restarts.
    /// The invite fails for want of a homeserver; the join that followed was refused ("not invited") and the message
    /// counted as refused for good. Now the invite's outage is the join's outage: the message waits.
    @Test func aGhostJoinWhoseInviteMeetsAnOutageWaitsInsteadOfFailing() async throws {
        let fake = try FakeHomeserver { request, _ in
            if request.path.contains("/invite") { return FakeHomeserver.json(502, #"{"errcode": "M_UNKNOWN", "error": "restarting"}"#) }
            return FakeHomeserver.json(403, #"{"errcode": "M_FORBIDDEN", "error": "You are not invited to this room."}"#)
        }
        let policy = RetryPolicy(maxAttempts: 2, initialBackoff: .milliseconds(1), maxBackoff: .milliseconds(2),
                                 maxRateLimitWaits: 1, maxRateLimitWait: .milliseconds(10))
        let client = MatrixClient(configuration: .init(homeserverURL: fake.url, accessToken: "as", retryPolicy: policy), logger: .disabled)
        let link = AppServiceMatrixLink(client: client, namespace: GhostNamespace(prefix: "_xmpp_", serverName: "localhost", botLocalpart: "isthmus")!,
                                        logger: .disabled)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await fake.run() }
            defer { fake.stop() }
            await #expect(throws: MatrixLinkError.self) {
                try await link.join(RoomID("!room:localhost")!, as: UserID("@_xmpp_romeo:localhost")!)
            }
            // The join was not tried again after the failed invite.
            #expect(fake.requests.filter { $0.path.contains("/join") }.count == 1)
        }
    }

    /// A ghost's message refused with `M_FORBIDDEN` ("not in room") is the caller's to decide (join and send again:
    /// ``MatrixDeliveryMachine/Input/ghostNotInRoom(_:reason:)``, the DMs): the link tells it apart and sends nothing more.
    @Test func aGhostThatIsNotInTheRoomIsReportedAsSuchAndNothingElseIsSent() async throws {
        let fake = try FakeHomeserver { request, _ in
            if request.path.contains("/send/") { return FakeHomeserver.json(403, #"{"errcode": "M_FORBIDDEN", "error": "User not in room"}"#) }
            return FakeHomeserver.json(200, #"{"room_id": "!room:localhost"}"#)
        }
        let client = MatrixClient(configuration: .init(homeserverURL: fake.url, accessToken: "as"), logger: .disabled)
        let link = AppServiceMatrixLink(client: client, namespace: GhostNamespace(prefix: "_xmpp_", serverName: "localhost", botLocalpart: "isthmus")!,
                                        logger: .disabled)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await fake.run() }
            defer { fake.stop() }
            let refusal = await #expect(throws: MatrixLinkError.self) {
                try await link.send(OutgoingMatrixMessage(kind: .text, body: "hi"), as: UserID("@_xmpp_romeo:localhost")!,
                                    in: RoomID("!room:localhost")!, txnID: ClientTransactionID("t1")!, timestamp: nil)
            }
            guard case .notInRoom(let reason)? = refusal else { Issue.record("expected notInRoom, got \(String(describing: refusal))"); return }
            #expect(reason.contains("M_FORBIDDEN"))
            #expect(fake.requests.map { $0.path.contains("/send/") ? "send" : $0.path } == ["send"])
        }
    }
}
