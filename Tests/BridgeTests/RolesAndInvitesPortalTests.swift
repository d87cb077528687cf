import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import TestSupport

/// Roles and invitations through a whole bridge over the scripted fakes: routing, effects, the store.
@Suite struct RolesAndInvitesPortalTests {
    let room = RoomID("!room:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let alice = UserID("@alice:localhost")!
    let naming = BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!

    func linked(_ harness: BridgeHarness, members: [UserID: String?]) async throws {
        harness.matrix.state.withLock { $0.members[room] = members }
        try await harness.store.insertRoomLink(RoomLink(matrixRoom: room, matrixAlias: nil, muc: muc))
        harness.xmpp.feed.yield(.connected(reconnected: false))
        try await eventually("link active") { try await harness.store.roomLinks().first?.status == .active }
    }

    @Test func anOwnersGhostGetsItsLevelWithEveryOtherEntryKept() async throws {
        let harness = try BridgeHarness()
        let bot = harness.matrix.botUserID
        harness.matrix.state.withLock {
            $0.powerStates[room] = RoomPowerState(roomVersion: "10", creators: [alice], powerLevels: .object([
                "users": .object([bot.rawValue: .integer(100), alice.rawValue: .integer(100)]), "ban": .integer(50)]))
        }
        try await linked(harness, members: [alice: "Alice"])
        harness.xmpp.feed.yield(.presence(RoomPresence(room: muc, nick: "Romeo", to: FakeXMPPLink.bot, available: true,
                                                       realJID: JID("romeo@localhost"), affiliation: .owner, role: .moderator)))
        let ghost = try #require(harness.matrix.ghostUserID(forIdentity: "romeo@localhost"))
        let written = try await eventuallyValue("the ghost's level written") { () -> JSONValue? in
            harness.matrix.state.withLock { $0.powerLevelWrites.last?.1 }
        }
        // The bot has 100 in a version 10 room: an owner's ghost gets 99, never the bot's own level.
        #expect(written == .object(["users": .object([bot.rawValue: .integer(100), alice.rawValue: .integer(100),
                                                       ghost.rawValue: .integer(99)]), "ban": .integer(50)]))
        // Unlinked: the ghost's level goes before the ghost does; everything else stays.
        _ = try await harness.store.markUnlinking(matrixRoom: room)
        try await eventually("the link is gone") { try await harness.store.roomLinks().isEmpty }
        #expect(harness.matrix.state.withLock { $0.powerLevelWrites.last?.1 }
                == .object(["users": .object([bot.rawValue: .integer(100), alice.rawValue: .integer(100)]), "ban": .integer(50)]))
        await harness.stop()
    }

    @Test func anInvitationTheMUCForwardsToAPuppetJIDInvitesThatUser() async throws {
        let harness = try BridgeHarness()
        try await linked(harness, members: [alice: "Alice"])
        let bob = UserID("@bob:localhost")!
        harness.xmpp.feed.yield(.invite(RoomInvite(room: muc, invitee: naming.puppetJID(for: bob)!.bare, inviter: nil, reason: nil)))
        try await eventually("bob invited") { harness.matrix.state.withLock { $0.invites.map(\.user) } == [bob] }
        #expect(harness.matrix.state.withLock { $0.invites.first?.reason } == "Invited from the XMPP room")
        await harness.stop()
    }

    @Test func aMatrixInviteOfAGhostWithAKnownAddressGoesOutFromTheInvitersOccupant() async throws {
        let harness = try BridgeHarness()
        try await linked(harness, members: [alice: "Alice"])
        let juliet = JID("juliet@localhost")!
        let ghost = try #require(harness.matrix.ghostUserID(forIdentity: juliet.description))
        // Juliet was seen in another room: only the ghost table knows her address.
        _ = try await harness.store.recordGhost(ghost, identity: juliet.description, globalName: "Juliet")
        let invite = MatrixRoomEvent(eventID: EventID("$i1")!, room: room, sender: alice, stateKey: ghost.rawValue,
                                     content: .member(membership: .invite, displayname: nil, reason: nil))
        try await harness.bridge.acceptMatrixEvents([invite])
        try await eventually("invitation sent") { harness.xmpp.state.withLock { $0.invites.count } == 1 }
        let sent = harness.xmpp.state.withLock { $0.invites.first }
        #expect(sent?.from == naming.puppetJID(for: alice))
        #expect(sent?.to == juliet)
        await harness.stop()
    }
}
