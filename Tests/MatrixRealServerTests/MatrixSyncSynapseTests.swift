import Foundation
import IsthmusCommon
import Matrix
import MatrixClient
import TestSupport
@testable import Bridge
import XCTest

/// `/sync` against the test bed's real Synapse, as an ordinary account (Matrix client mode's intake): the position
/// moves on, what came after it arrives in order with its room, an invitation shows with its inviter, and the
/// account's own message comes back marked with its transaction id (the echo).
final class MatrixSyncSynapseTests: SynapseListenerTestCase {
    func testSyncDeliversWhatCameAfterThePositionAndShowsInvitations() async throws {
        let (alice, aliceID) = try await harness.userClient("alice")
        let (carol, carolID) = try await harness.userClient("carol")
        let initial = try await carol.sync(since: nil, filter: nil, wait: .zero, as: carolID)
        XCTAssertFalse(initial.nextBatch.isEmpty)

        let room = try await harness.roomWithBot(alice, preset: "public_chat")
        _ = try await carol.join(room, as: nil)
        let txn = ClientTransactionID("carol-\(UUID().uuidString)")!
        _ = try await carol.sendMessage(.text("from carol"), to: room, transactionID: txn)
        _ = try await alice.sendMessage(.text("from alice"), to: room, transactionID: ClientTransactionID("alice-\(UUID().uuidString)")!)

        var since = initial.nextBatch
        var seen: [ClientEvent] = []
        try await eventually("both messages synced", timeout: 20) {
            let batch = try await carol.sync(since: since, filter: nil, wait: .seconds(2), as: carolID)
            since = batch.nextBatch
            seen += batch.joined.filter { $0.room == room }.flatMap(\.events).filter { $0.type == "m.room.message" }
            return seen.count >= 2
        }
        XCTAssertEqual(seen.map(\.sender), [carolID, aliceID], "in order")
        XCTAssertEqual(seen.first?.unsigned?.transactionID, txn.rawValue, "the account's own message is known by its txnId")

        // The bridge's filter (what a bridge account syncs) is one Synapse takes, and still brings room messages.
        let filtered = AccountSyncSource(client: carol, account: carolID)
        let marker = ClientTransactionID("alice-\(UUID().uuidString)")!
        _ = try await alice.sendMessage(.text("filtered"), to: room, transactionID: marker)
        try await eventually("the message through the bridge's filter", timeout: 20) {
            let batch = try await filtered.sync(since: since, wait: .seconds(2))
            since = batch.nextBatch
            return batch.joined.contains { $0.room == room && $0.events.contains { $0.sender == aliceID && $0.type == "m.room.message" } }
        }

        let other = try await harness.roomWithBot(alice, preset: "private_chat")
        try await alice.invite(carolID, to: other, as: nil)
        try await eventually("the invitation synced", timeout: 20) {
            let batch = try await carol.sync(since: since, filter: nil, wait: .seconds(2), as: carolID)
            since = batch.nextBatch
            return batch.invited.contains { $0.room == other && $0.inviter == aliceID }
        }
    }
}
