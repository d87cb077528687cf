import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// ``ScenarioPair`` over real Prosody, Synapse and `isthmus serve`: a Matrix test user and an XMPP test user in a
/// freshly linked pair.
actor RealScenarioPair: ScenarioPair {
    let world: EndToEndHarness
    let alice: MatrixTestUser
    let romeo: XMPPTestClient
    let muc: JID
    let room: String
    /// Bodies read from the MUC so far (the client's queue is read once).
    private var inXMPP: [String] = []

    init(_ name: String) async throws {
        world = try EndToEndHarness(name)
        try await world.startBridge()
        alice = try await world.matrixUser("alice")
        muc = world.muc(name)
        romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        room = try await world.linkedRoom(owner: alice, muc: muc)
    }

    func xmppSays(_ body: String) async throws {
        try romeo.sendGroupchat(to: muc, body: body)
    }

    func matrixSays(_ body: String) async throws {
        try await alice.send(body, to: room)
    }

    func arrivedInMatrix(atLeast count: Int) async throws -> [String] {
        try await world.matrixMessages(alice, in: room, count: count, excluding: alice.userID).map { $0.body ?? "" }
    }

    func arrivedInXMPP(atLeast count: Int) async throws -> [String] {
        if inXMPP.count < count {
            let more = try await world.xmppMessages(romeo, from: muc, count: count - inXMPP.count, excludingNick: "Romeo")
            inXMPP += more.compactMap(\.body)
        }
        return inXMPP
    }

    func stopBridge() async throws { world.stopBridge() }

    func startBridge() async throws { try await world.startBridge() }

    func finish() {
        world.stopBridge()
        romeo.close()
    }
}

/// The shared scenarios (TestSupport's ``BridgeScenarios``) against real servers; `BridgeTests.FakeTierScenarioTests`
/// runs the same bodies over the fakes.
final class ScenarioTests: XCTestCase {
    func testTextBothWaysOnce() async throws {
        let pair = try await RealScenarioPair("scenario-text")
        try await BridgeScenarios.textBothWaysOnce(pair)
        await pair.finish()
    }

    func testDowntimeIsCaughtUpOnceInOrder() async throws {
        let pair = try await RealScenarioPair("scenario-down")
        try await BridgeScenarios.downtimeIsCaughtUpOnceInOrder(pair)
        await pair.finish()
    }
}
