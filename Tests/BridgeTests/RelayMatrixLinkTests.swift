import Bridge
import Foundation
import IsthmusCommon
import MatrixClient
import Testing

/// Matrix client mode's link: a ghost is only a name, so what it would do the account does (messages, reactions,
/// redactions) or nobody does (registering, naming, joining, typing); Matrix users are handled as usual.
@Suite struct RelayMatrixLinkTests {
    let room = RoomID("!room:localhost")!
    let alice = UserID("@alice:localhost")!

    @Test func aGhostsMessagesReactionsAndRedactionsAreTheAccounts() async throws {
        let account = FakeMatrixLink()
        let link = RelayMatrixLink(account: account)
        let ghost = try #require(link.ghostUserID(forIdentity: "romeo@montague.example"))
        let event = try await link.send(OutgoingMatrixMessage(kind: .text, body: "Romeo: hi"), as: ghost, in: room,
                                        txnID: ClientTransactionID("t1")!, timestamp: Date(timeIntervalSince1970: 1))
        _ = try await link.react(to: event, key: "👍", as: ghost, in: room, txnID: ClientTransactionID("t2")!, timestamp: nil)
        _ = try await link.redact(event, reason: nil, as: ghost, in: room, txnID: ClientTransactionID("t3")!)
        let (sent, reactions, redactions) = account.state.withLock { ($0.sent, $0.reactions, $0.redactions) }
        #expect(sent.map(\.user) == [account.botUserID])
        #expect(sent.first?.timestamp == nil, "an ordinary account cannot set origin_server_ts")
        #expect(reactions.map(\.user) == [account.botUserID])
        #expect(redactions.map(\.user) == [account.botUserID])
    }

    @Test func aGhostIsNoUserThere() async throws {
        let account = FakeMatrixLink()
        let link = RelayMatrixLink(account: account)
        let ghost = try #require(link.ghostUserID(forIdentity: "romeo@montague.example"))
        try await link.registerGhost(ghost)
        try await link.setDisplayname("Romeo", for: ghost)
        try await link.join(room, as: ghost)
        try await link.setRoomDisplayname("Romeo", for: ghost, in: room)
        try await link.setTyping(true, as: ghost, in: room, timeout: .seconds(5))
        try await link.invite(ghost, to: room, reason: nil)
        try await link.leave(room, as: ghost, reason: nil)
        #expect(try await link.membership(of: ghost, in: room, as: ghost) == .join, "a name is always there")
        let state = account.state.withLock { ($0.registered, $0.globalNames, $0.members, $0.roomNames, $0.typing, $0.invites.count, $0.leaves.count) }
        #expect(state.0.isEmpty && state.1.isEmpty && state.2.isEmpty && state.3.isEmpty && state.4.isEmpty && state.5 == 0 && state.6 == 0)
        await #expect(throws: RelayMatrixLinkError.directChatsUnsupported) {
            _ = try await link.createDirectRoom(as: ghost, inviting: alice)
        }
    }

    @Test func ghostsAreLeftOutOfThePowerLevelsAndMatrixUsersStay() async throws {
        let account = FakeMatrixLink()
        let link = RelayMatrixLink(account: account)
        let ghost = try #require(link.ghostUserID(forIdentity: "romeo@montague.example"))
        try await link.setPowerLevels(.object(["users": .object([ghost.rawValue: .integer(50), alice.rawValue: .integer(100)]),
                                               "users_default": .integer(0)]), in: room)
        let written = account.state.withLock { $0.powerLevelWrites.last?.1 }
        #expect(written == .object(["users": .object([alice.rawValue: .integer(100)]), "users_default": .integer(0)]))
        try await link.invite(alice, to: room, reason: "come")
        #expect(account.state.withLock { $0.invites.map(\.user) } == [alice])
    }

    @Test func bridgeInfoTheAccountMayNotSendIsLeftOutAndOtherFailuresStay() async throws {
        let account = FakeMatrixLink()
        account.state.withLock { $0.bridgeInfoRefused = true }
        let link = RelayMatrixLink(account: account)
        try await link.setBridgeInfo(BridgeInfoState(stateKey: "k", content: nil), in: room)
        await #expect(throws: MatrixError.self) { try await account.setBridgeInfo(BridgeInfoState(stateKey: "k", content: nil), in: room) }
    }

    /// Kicked (or banned): the account's sends wait as during an outage, so nothing is dropped until it is invited
    /// back; still in the room but refused, the refusal stands.
    @Test func sendsWaitWhileTheAccountIsOutOfTheRoomAndARefusalInsideStands() async throws {
        let account = FakeMatrixLink()
        account.state.withLock { $0.forbiddenSendRooms = [room] }
        let link = RelayMatrixLink(account: account)
        let ghost = try #require(link.ghostUserID(forIdentity: "romeo@montague.example"))
        await #expect(throws: MatrixLinkError.unavailable("the bridge's Matrix account \(account.botUserID) is not in the room: "
                                                          + "messages wait until someone invites it again")) {
            _ = try await link.send(OutgoingMatrixMessage(kind: .text, body: "Romeo: hi"), as: ghost, in: room,
                                    txnID: ClientTransactionID("t1")!, timestamp: nil)
        }
        account.state.withLock { $0.members[room, default: [:]][account.botUserID] = .some(nil) }   // joined, yet refused
        await #expect(throws: MatrixError.self) {
            _ = try await link.send(OutgoingMatrixMessage(kind: .text, body: "Romeo: hi"), as: ghost, in: room,
                                    txnID: ClientTransactionID("t2")!, timestamp: nil)
        }
    }

    /// A ghost's avatar becomes the `avatar_url` of its messages' profiles in that room (no member event: there is no
    /// such member); removed, it is left out again.
    @Test func aGhostsAvatarGoesIntoItsProfiles() async throws {
        let account = FakeMatrixLink()
        let link = RelayMatrixLink(account: account)
        let ghost = try #require(link.ghostUserID(forIdentity: "romeo@montague.example"))
        let mxc = try #require(MXCURI(mxc: "mxc://localhost/avatar1"))
        try await link.setRoomAvatar(mxc, for: ghost, in: room)
        var message = OutgoingMatrixMessage(kind: .text, body: "Romeo: hi")
        message.profile = PerMessageProfile(id: "romeo", displayname: "Romeo", hasFallback: true)
        _ = try await link.send(message, as: ghost, in: room, txnID: ClientTransactionID("t1")!, timestamp: nil)
        try await link.setRoomAvatar(nil, for: ghost, in: room)
        _ = try await link.send(message, as: ghost, in: room, txnID: ClientTransactionID("t2")!, timestamp: nil)
        let profiles = account.state.withLock { $0.sent.map(\.message.profile?.avatarURL) }
        #expect(profiles == ["mxc://localhost/avatar1", nil])
        #expect(account.state.withLock { $0.members[room]?[ghost] } == nil, "no member event for a ghost")
    }
}
