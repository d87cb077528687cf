@testable import Bridge
import IsthmusCommon
import IsthmusStore
import Matrix
import Media
import Testing
import XMPP

/// A DM a Matrix user starts by inviting a ghost.
@Suite struct DirectInviteRulesTests {
    let alice = UserID("@alice:localhost")!
    let ghost = UserID("@_xmpp_romeo:localhost")!

    func shared(_ name: String, ghostJoined: Bool, userJoined: Bool) -> SharedRoom {
        SharedRoom(linkedRoom: RoomID("!\(name):localhost")!, muc: JID("\(name)@conference.localhost")!,
                   ghostJoined: ghostJoined, userJoined: userJoined)
    }

    @Test func aDirectInviteRunsThroughTheRoomWhereBothAreInTheMUC() {
        let away = shared("away", ghostJoined: false, userJoined: true)
        let ghostOnly = shared("ghostonly", ghostJoined: true, userJoined: false)
        let both = shared("both", ghostJoined: true, userJoined: true)
        #expect(DirectChatRules.decide(isDirect: true, shared: [away, ghostOnly, both]) == .open(both))
        #expect(DirectChatRules.decide(isDirect: true, shared: [away, ghostOnly]) == .open(ghostOnly))
        // Nobody present: the first shared room, where the DM then says why a message was not delivered.
        #expect(DirectChatRules.decide(isDirect: true, shared: [away]) == .open(away))
    }

    @Test func aDirectInviteSharingNoRoomIsDeclinedAnotherInviteIsLeftAlone() {
        let both = shared("both", ghostJoined: true, userJoined: true)
        #expect(DirectChatRules.decide(isDirect: true, shared: []) == .refuse(reason: DirectChatRules.nothingSharedReason))
        // Not a direct chat (a room upgrade invites every member, ghosts included): not the DMs' business.
        #expect(DirectChatRules.decide(isDirect: nil, shared: [both]) == .ignore)
        #expect(DirectChatRules.decide(isDirect: false, shared: []) == .ignore)
    }

    @Test func withEncryptionRequiredOnlyAnEncryptedDMIsOpened() {
        let both = shared("both", ghostJoined: true, userJoined: true)
        #expect(DirectChatRules.decide(isDirect: true, shared: [both], encrypted: true, requireEncrypted: true) == .open(both))
        for encrypted in [false, nil] as [Bool?] {
            #expect(DirectChatRules.decide(isDirect: true, shared: [both], encrypted: encrypted, requireEncrypted: true)
                    == .refuse(reason: DirectChatRules.unencryptedReason))
        }
        #expect(DirectChatRules.decide(isDirect: true, shared: [both], encrypted: false) == .open(both), "allowed, not required")
        #expect(DirectChatRules.decide(isDirect: false, shared: [both], encrypted: false, requireEncrypted: true) == .ignore)
        #expect(EncryptedRoomPolicy.required.accepts(encrypted: true) && !EncryptedRoomPolicy.required.accepts(encrypted: false))
        #expect(EncryptedRoomPolicy.refused.accepts(encrypted: false) && !EncryptedRoomPolicy.refused.accepts(encrypted: true))
        #expect(EncryptedRoomPolicy.allowed.accepts(encrypted: true) && EncryptedRoomPolicy.allowed.accepts(encrypted: false))
    }

    @Test func theUsersInvitationOfTheGhostIntoItsDMRoomIsAccepted() {
        let dm = RoomID("!dm:localhost")!
        let chat = DirectChat(linkedRoom: RoomID("!linked:localhost")!, identity: "romeo@localhost", matrixUser: alice,
                              muc: JID("lounge@conference.localhost")!, ghost: ghost, matrixRoom: dm)
        func invite(_ invitee: UserID, by sender: UserID) -> MatrixRoomEvent {
            MatrixRoomEvent(eventID: EventID("$i1")!, room: dm, sender: sender, stateKey: invitee.rawValue,
                            content: .member(membership: .invite, displayname: nil, reason: nil))
        }
        #expect(DirectChatRules.step(for: invite(ghost, by: alice), chat: chat, occupant: nil) == .acceptInvite)
        // Someone else inviting the ghost, or alice inviting another user: nothing for the ghost to do.
        #expect(DirectChatRules.step(for: invite(ghost, by: UserID("@mallory:localhost")!), chat: chat, occupant: nil) == .ignore)
        #expect(DirectChatRules.step(for: invite(UserID("@bob:localhost")!, by: alice), chat: chat, occupant: nil) == .ignore)
    }

}
