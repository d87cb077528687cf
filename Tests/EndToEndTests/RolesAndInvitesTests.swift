import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMPP

/// MUC roles → ghosts' power levels (one way) and invitations both ways, through real servers.
///
/// The MUC is created and configured by an XMPP user (its owner) as non-anonymous with invitations allowed, so the
/// bridge sees real JIDs (a ghost of a real JID can be invited) and puppets may invite (ejabberd refuses occupants'
/// invitations unless `muc#roomconfig_allowinvites` is on). The bot is an additional creator of the Matrix room
/// (room version 12): unlimited power, so an owner's ghost can get 100.
final class RolesAndInvitesTests: XCTestCase {
    struct Pair {
        let world: EndToEndHarness
        let alice: MatrixTestUser
        let muc: JID
        let room: String
        /// The MUC's owner (XMPP user bob, nick Romeo).
        let romeo: XMPPTestClient
        let romeoGhost: String
    }

    /// XMPP user carol joins as Juliet (so the bridge learns her real JID and makes her ghost), leaves, and alice
    /// invites Juliet's ghost into the Matrix room. Returns Juliet's client (available, so a message to her bare JID
    /// reaches it) and her ghost.
    func julietLeavesAndAliceInvitesHerGhost(_ pair: Pair) async throws -> (XMPPTestClient, String) {
        let juliet = try await pair.world.xmppUser("carol")
        try juliet.send(.presence(Presence()))
        try await juliet.joinRoom(pair.muc, nick: "Juliet")
        let julietGhost = try await eventuallyValue("a ghost named Juliet joined") {
            try await pair.alice.members(of: pair.room).first(where: { $0.value == "Juliet" })?.key
        }
        try juliet.send(.presence(Presence(type: .unavailable, to: pair.muc.with(resource: "Juliet")!)))
        try await eventually("Juliet's ghost left") { try await pair.alice.members(of: pair.room)[julietGhost] == nil }
        try await pair.alice.invite(julietGhost, to: pair.room)
        return (juliet, julietGhost)
    }

    func makePair(_ name: String, allowInvites: Bool = true) async throws -> Pair {
        let world = try EndToEndHarness(name)
        try await world.startBridge()
        let alice = try await world.matrixUser("alice")
        let muc = world.muc(name)
        let romeo = try await world.xmppUser("bob")
        try await romeo.createRoom(muc, nick: "Romeo", fields: ["muc#roomconfig_whois": ["anyone"],
                                                                "muc#roomconfig_allowinvites": [allowInvites ? "1" : "0"]])
        let alias = "room-\(world.suffix)-\(name)"
        let room = try await alice.createRoom(aliasLocalpart: alias, invite: [world.botUserID], additionalCreators: [world.botUserID])
        let linked = try world.cli("link", room, muc.description)
        XCTAssertEqual(linked.status, 0, linked.stderr)
        try await world.waitForLink(room, status: "active")
        let ghost = try await eventuallyValue("a ghost named Romeo joined") {
            try await alice.members(of: room).first(where: { $0.value == "Romeo" })?.key
        }
        return Pair(world: world, alice: alice, muc: muc, room: room, romeo: romeo, romeoGhost: ghost)
    }

    /// `user`'s entry in the room's `m.room.power_levels` `users` (nil: not listed).
    func level(of user: String, in pair: Pair) async throws -> Int? {
        let levels = try await pair.alice.state("m.room.power_levels", in: pair.room) ?? [:]
        return (levels["users"] as? [String: Any])?[user] as? Int
    }

    func testRolesBecomeGhostPowerLevelsAndMatrixPowerLevelsNeverChangeTheMUC() async throws {
        let pair = try await makePair("roles")
        defer { pair.world.stopBridge() }
        // The MUC's owner: its ghost gets 100.
        try await eventually("Romeo's ghost has power level 100") { try await self.level(of: pair.romeoGhost, in: pair) == 100 }

        // A participant has no level; the owner makes her a moderator (50), then takes it back (none).
        let juliet = try await pair.world.xmppUser("carol")
        try await juliet.joinRoom(pair.muc, nick: "Juliet")
        let julietGhost = try await eventuallyValue("a ghost named Juliet joined") {
            try await pair.alice.members(of: pair.room).first(where: { $0.value == "Juliet" })?.key
        }
        try await pair.romeo.setRole("moderator", of: "Juliet", in: pair.muc)
        try await eventually("Juliet's ghost has power level 50") { try await self.level(of: julietGhost, in: pair) == 50 }
        try await pair.romeo.setRole("participant", of: "Juliet", in: pair.muc)
        try await eventually("Juliet's ghost lost its level") { try await self.level(of: julietGhost, in: pair) == nil }
        let ownerLevel = try await level(of: pair.romeoGhost, in: pair)
        XCTAssertEqual(ownerLevel, 100, "the owner's level is untouched")

        // A Matrix admin raises bob to 100: his puppet gets no MUC affiliation or role from it.
        let bob = try await pair.world.matrixUser("bob")
        try await pair.alice.invite(bob.userID, to: pair.room)
        try await bob.join(pair.room)
        _ = try await pair.romeo.nextPresence(within: 20, "bob's occupant") { $0.from?.resource == "bob" && $0.type == .available }
        try await pair.alice.grantPower(100, to: bob.userID, in: pair.room)
        // Sentinel: a message bob sends after the change reached the MUC, so the bridge has handled what came before.
        try await bob.send("after the power change", to: pair.room)
        _ = try await pair.romeo.nextMessage(from: pair.muc, nick: "bob", "the sentinel") { $0.body == "after the power change" }
        let puppet = JID("bob\\3alocalhost@\(pair.world.bed.componentDomain)")!
        for affiliation in ["owner", "admin"] {
            let listed = try await pair.romeo.mucAdminList("affiliation", affiliation, in: pair.muc).compactMap { $0.jid?.bare }
            XCTAssertFalse(listed.contains(puppet), "bob's puppet is no MUC \(affiliation): \(listed)")
        }
        let moderators = try await pair.romeo.mucAdminList("role", "moderator", in: pair.muc).compactMap(\.nick)
        XCTAssertFalse(moderators.contains("bob"), "bob's puppet is no MUC moderator: \(moderators)")
        XCTAssertTrue(moderators.contains("Romeo"), "the list is read (the owner is a moderator): \(moderators)")
        juliet.close()
        pair.romeo.close()
    }

    func testInvitationsCrossBothWays() async throws {
        let pair = try await makePair("invites")
        defer { pair.world.stopBridge() }
        // Matrix → XMPP: Juliet was here and left; alice invites her ghost; Juliet's client gets the room's invitation.
        let (juliet, _) = try await julietLeavesAndAliceInvitesHerGhost(pair)
        let invitation = try await juliet.nextMessage(within: 20, "the room's invitation") {
            $0.from == pair.muc.bare && $0.mucUser.flatMap(MUCInvite.init) != nil
        }
        let invite = invitation.mucUser.flatMap(MUCInvite.init)
        XCTAssertEqual(invite?.from?.bare, JID("alice\\3alocalhost@\(pair.world.bed.componentDomain)"), "from alice's puppet")

        // XMPP → Matrix: the owner invites carol's puppet JID; the bot invites carol into the Matrix room.
        let carol = try await pair.world.matrixUser("carol")
        let puppet = JID("carol\\3alocalhost@\(pair.world.bed.componentDomain)")!
        try pair.romeo.send(.message(Message(to: pair.muc.bare, mucUser: MUCInvite(to: puppet, reason: "join us").mucUser)))
        let reason = try await eventuallyValue("carol is invited on Matrix", timeout: 20) { () -> String? in
            let state = try await pair.alice.state("m.room.member", stateKey: carol.userID, in: pair.room)
            return state?["membership"] as? String == "invite" ? state?["reason"] as? String ?? "" : nil
        }
        XCTAssertEqual(reason, "Romeo invited you from the XMPP room: join us")
        try await carol.join(pair.room)
        _ = try await pair.romeo.nextPresence(within: 20, "carol's occupant") { $0.from?.resource == "carol" && $0.type == .available }
        juliet.close()
        pair.romeo.close()
    }

    /// The per-link opt-in: Matrix users with power level 50 or more get the MUC moderator role for their occupant
    /// (the bridge created the MUC, so its occupant owns it and may grant roles), and lose it below 50.
    func testWithTheOptInMatrixModeratorsOccupantsAreMUCModerators() async throws {
        let world = try EndToEndHarness("optin")
        try await world.startBridge()
        defer { world.stopBridge() }
        let alice = try await world.matrixUser("alice")
        let bob = try await world.matrixUser("bob")
        let muc = world.muc("optin")
        let room = try await alice.createRoom(aliasLocalpart: "room-\(world.suffix)-optin", invite: [world.botUserID, bob.userID])
        let linked = try world.cli("link", room, muc.description, "--matrix-moderators")
        XCTAssertEqual(linked.status, 0, linked.stderr)
        try await world.waitForLink(room, status: "active")
        let juliet = try await world.xmppUser("carol")
        try await juliet.joinRoom(muc, nick: "Juliet")
        func item(of nick: String) async throws -> MUCItem? {
            try await juliet.nextPresence(within: 20, "\(nick)'s presence") { $0.from?.resource == nick && $0.type == .available }
                .mucUser?.item
        }
        func role(of nick: String) async throws -> MUCRole? { try await item(of: nick)?.role }
        try await bob.join(room)
        let joined = try await item(of: "bob")
        // The bridge created the MUC, so its occupant owns it — under its own JID (`isthmus@component`), not the
        // component's domain: ejabberd looks an occupant's affiliation up by bare JID and then by domain, and a domain
        // owner would make every Matrix user's occupant an owner too. On both servers the puppet has no affiliation.
        XCTAssertEqual(joined?.affiliation, MUCAffiliation.none, "a Matrix user's occupant gets no affiliation from the bridge's")
        XCTAssertEqual(joined?.role, .participant)
        try await alice.grantPower(50, to: bob.userID, in: room)
        let raised = try await role(of: "bob")
        XCTAssertEqual(raised, .moderator, "a Matrix moderator's occupant is a MUC moderator")
        try await alice.grantPower(0, to: bob.userID, in: room)
        let lowered = try await role(of: "bob")
        XCTAssertEqual(lowered, .participant, "and is no longer one below 50")
        juliet.close()
    }

    /// A room that does not let occupants invite: ejabberd bounces the puppet's invitation and the inviter is told in
    /// the Matrix room; Prosody lets any occupant of an open room invite (its `allowinvites` governs members-only
    /// rooms), so there the invitation arrives. Each server's branch asserts what that server does.
    func testARefusedInvitationIsToldInTheMatrixRoom() async throws {
        let pair = try await makePair("noinvites", allowInvites: false)
        defer { pair.world.stopBridge() }
        let (juliet, _) = try await julietLeavesAndAliceInvitesHerGhost(pair)
        if pair.world.bed.xmppServer == .ejabberd {
            let notice = try await eventuallyValue("the refusal told in the Matrix room", timeout: 20) {
                try await pair.alice.messages(in: pair.room).first {
                    $0.sender == pair.world.botUserID && $0.msgtype == "m.notice" && $0.body?.contains("invitation could not be delivered") == true
                }
            }
            XCTAssertTrue(notice.body?.hasPrefix("⚠️ alice's invitation could not be delivered to the XMPP room (not-allowed") == true,
                          notice.body ?? "")
        } else {
            _ = try await juliet.nextMessage(within: 20, "the room's invitation") {
                $0.from == pair.muc.bare && $0.mucUser.flatMap(MUCInvite.init) != nil
            }
        }
        juliet.close()
        pair.romeo.close()
    }
}
