@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// The avatar sub-machine alone, over a room view written out by hand: a ghost's avatar follows its occupant's
/// XEP-0153 hash (held back while the ghost is set up, only on change), a puppet's follows its Matrix user's
/// `avatar_url`. (Through the portal machine: `PortalAvatarMachineTests`.)
@Suite struct AvatarMachineTests {
    /// The machine and the room it sees.
    struct Fixture {
        let room = RoomID("!room:localhost")!
        let muc = JID("lounge@conference.localhost")!
        let romeo = UserID("@_xmpp_romeo:localhost")!
        let alice = UserID("@alice:localhost")!
        let bot = UserID("@bridge:localhost")!
        let hashA = String(repeating: "a", count: 40)
        let hashB = String(repeating: "b", count: 40)
        var machine = AvatarMachine()
        var realJIDs: [String: JID] = [:]
        var joinedPuppets: [UserID: String] = [:]

        var view: AvatarMachine.Room {
            let (realJIDs, joinedPuppets, bot) = (realJIDs, joinedPuppets, bot)
            return AvatarMachine.Room(occupantRealJID: { realJIDs[$0] },
                                      puppetJID: { JID("\($0.localpart)@bridge.localhost") },
                                      joinedPuppetNick: { joinedPuppets[$0] },
                                      isBridged: { $0 != bot && !$0.localpart.hasPrefix("_xmpp_") },
                                      muc: muc)
        }

        mutating func act(_ input: AvatarMachine.Input) -> [AvatarMachine.Action] {
            machine.receive(input, in: view)
        }

        func presence(_ avatar: AvatarUpdate?, realJID: JID? = nil) -> RoomPresence {
            var presence = RoomPresence(room: muc, nick: "romeo", available: true, realJID: realJID)
            presence.avatar = avatar
            return presence
        }

        func setup(join: Bool) -> AvatarMachine.GhostSetup {
            .init(ghost: romeo, identity: "romeo", nick: "romeo", join: join,
                       saved: RoomGhost(room: room, user: romeo, nick: "romeo", occupantID: nil, realJID: nil, joined: true))
        }

        func ghostAvatar(_ sha1: String?) -> AvatarMachine.Action {
            .setGhostAvatar(.init(ghost: romeo, sha1: sha1, sources: [muc.with(resource: "romeo")!]))
        }

        func puppetAvatar(_ user: UserID, _ mxc: MXCURI?, nick: String? = nil) -> AvatarMachine.Action {
            .setPuppetAvatar(.init(user: user, occupant: JID("\(user.localpart)@bridge.localhost")!, mxc: mxc, nick: nick))
        }
    }

    @Test func aGhostsAvatarWaitsForItsSetupAndGoesOutOnlyWhenTheHashChanges() {
        var f = Fixture()
        #expect(f.act(.occupantPresent(f.presence(.photo(f.hashA)), ghost: f.romeo, setup: f.setup(join: true))) == [])
        #expect(f.act(.ghostSetUp(f.romeo, failed: false)) == [f.ghostAvatar(f.hashA)])
        #expect(f.act(.ghostSetUp(f.romeo, failed: false)) == [], "nothing waits any more")
        #expect(f.act(.occupantPresent(f.presence(.photo(f.hashA)), ghost: f.romeo, setup: nil)) == [])
        #expect(f.act(.occupantPresent(f.presence(nil), ghost: f.romeo, setup: nil)) == [])
        #expect(f.act(.occupantPresent(f.presence(.notReady), ghost: f.romeo, setup: nil)) == [])
        #expect(f.act(.occupantPresent(f.presence(.photo(f.hashB)), ghost: f.romeo, setup: nil)) == [f.ghostAvatar(f.hashB)])
        #expect(f.act(.occupantPresent(f.presence(AvatarUpdate.none), ghost: f.romeo, setup: nil)) == [f.ghostAvatar(nil)])
    }

    @Test func aFailedSetupForgetsTheHashSoTheNextPresenceRetries() {
        var f = Fixture()
        #expect(f.act(.occupantPresent(f.presence(.photo(f.hashA)), ghost: f.romeo, setup: f.setup(join: true))) == [])
        #expect(f.act(.ghostSetUp(f.romeo, failed: true)) == [])
        #expect(f.act(.occupantPresent(f.presence(.photo(f.hashA)), ghost: f.romeo, setup: nil)) == [f.ghostAvatar(f.hashA)])
    }

    @Test func aGhostThatLeftOrJoinsAnewGetsItsAvatarAgain() {
        var f = Fixture()
        #expect(f.act(.occupantPresent(f.presence(.photo(f.hashA)), ghost: f.romeo, setup: nil)) == [f.ghostAvatar(f.hashA)])
        #expect(f.act(.ghostLeft(f.romeo)) == [])
        #expect(f.act(.occupantPresent(f.presence(.photo(f.hashA)), ghost: f.romeo, setup: nil)) == [f.ghostAvatar(f.hashA)])
        // A setup that joins the ghost anew: the known hash no longer counts, the avatar waits for the join.
        #expect(f.act(.occupantPresent(f.presence(.photo(f.hashA)), ghost: f.romeo, setup: f.setup(join: true))) == [])
        #expect(f.act(.ghostSetUp(f.romeo, failed: false)) == [f.ghostAvatar(f.hashA)])
    }

    @Test func theRealJIDIsAskedFirstFromThePresenceOrTheRoomModel() {
        var f = Fixture()
        let occupant = f.muc.with(resource: "romeo")!
        #expect(f.act(.occupantPresent(f.presence(.photo(f.hashA), realJID: JID("romeo@montague.example/phone")), ghost: f.romeo, setup: nil))
                == [.setGhostAvatar(.init(ghost: f.romeo, sha1: f.hashA, sources: [JID("romeo@montague.example")!, occupant]))])
        f.realJIDs["romeo"] = JID("romeo@verona.example/laptop")
        #expect(f.act(.occupantPresent(f.presence(.photo(f.hashB)), ghost: f.romeo, setup: nil))
                == [.setGhostAvatar(.init(ghost: f.romeo, sha1: f.hashB, sources: [JID("romeo@verona.example")!, occupant]))])
    }

    @Test func aMatrixUsersAvatarGoesToItsPuppetOnChangeWithTheNickWhenJoined() {
        var f = Fixture()
        #expect(f.act(.matrixMember(f.alice, mxc: "mxc://localhost/a1", present: true)) == [f.puppetAvatar(f.alice, "mxc://localhost/a1")])
        #expect(f.act(.matrixMember(f.alice, mxc: "mxc://localhost/a1", present: true)) == [])
        f.joinedPuppets[f.alice] = "Alice"
        #expect(f.act(.matrixMember(f.alice, mxc: "mxc://localhost/a2", present: true))
                == [f.puppetAvatar(f.alice, "mxc://localhost/a2", nick: "Alice")])
        // Leaving clears it once, without the nick (no presence announces it).
        #expect(f.act(.matrixMember(f.alice, mxc: "mxc://localhost/a2", present: false)) == [f.puppetAvatar(f.alice, nil)])
        #expect(f.act(.matrixMember(f.alice, mxc: nil, present: false)) == [])
    }

    @Test func theMembersAvatarsReadAtAnActivationSkipTheBotAndGhosts() {
        var f = Fixture()
        let bob = UserID("@bob:localhost")!
        #expect(f.act(.memberAvatarsRead([bob: "mxc://localhost/b", f.alice: "mxc://localhost/a", f.bot: "mxc://localhost/bot",
                                          f.romeo: "mxc://localhost/r"]))
                == [f.puppetAvatar(f.alice, "mxc://localhost/a"), f.puppetAvatar(bob, "mxc://localhost/b")])
        #expect(f.act(.memberAvatarsRead([f.alice: "mxc://localhost/a"])) == [])
    }
}
