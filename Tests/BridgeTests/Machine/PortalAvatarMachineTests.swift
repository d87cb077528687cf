@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing

/// Avatars through the portal machine (RICH.md §8): an occupant's XEP-0153 hash becomes one avatar job for its ghost,
/// after the ghost is set up, and only when the hash changes; a Matrix user's `avatar_url` becomes its puppet's.
@Suite struct PortalAvatarMachineTests {
    let hashA = String(repeating: "a", count: 40)
    let hashB = String(repeating: "b", count: 40)

    func presence(_ f: MachineFixture, _ nick: String, _ avatar: AvatarUpdate?, available: Bool = true) -> RoomPresence {
        var presence = f.presence(nick, available: available, occupantID: "o1")
        presence.avatar = avatar
        return presence
    }

    func job(_ f: MachineFixture, _ sha1: String?) -> AvatarMachine.GhostAvatar {
        .init(ghost: f.ghost(of: "romeo", occupantID: "o1"), sha1: sha1, sources: [f.muc.with(resource: "romeo")!])
    }

    @Test func anOccupantsHashIsSetAfterItsGhostIsReadyAndOnlyWhenItChanges() {
        var f = MachineFixture()
        f.activate()
        let first = f.act(.xmppPresence(presence(f, "romeo", .photo(hashA))))
        guard case .ghosts(.prepare(let setup))? = first.last, first.count == 1 else {
            Issue.record("expected the ghost's setup alone, got \(first)")
            return
        }
        #expect(f.act(.ghosts(.prepared(setup, error: nil))) == [.avatars(.setGhostAvatar(job(f, hashA)))])
        // The same hash again (a status change): nothing. No update element, or "not ready": nothing.
        #expect(f.act(.xmppPresence(presence(f, "romeo", .photo(hashA)))) == [])
        #expect(f.act(.xmppPresence(presence(f, "romeo", nil))) == [])
        #expect(f.act(.xmppPresence(presence(f, "romeo", .notReady))) == [])
        // A new hash, then an empty <photo/> (removed).
        #expect(f.act(.xmppPresence(presence(f, "romeo", .photo(hashB)))) == [.avatars(.setGhostAvatar(job(f, hashB)))])
        #expect(f.act(.xmppPresence(presence(f, "romeo", AvatarUpdate.none))) == [.avatars(.setGhostAvatar(job(f, nil)))])
    }

    @Test func aGhostThatLeftGetsItsAvatarAgainWhenItReturns() {
        var f = MachineFixture()
        f.activate()
        guard case .ghosts(.prepare(let setup))? = f.act(.xmppPresence(presence(f, "romeo", .photo(hashA)))).last else {
            Issue.record("no ghost setup")
            return
        }
        #expect(f.act(.ghosts(.prepared(setup, error: nil))) == [.avatars(.setGhostAvatar(job(f, hashA)))])
        _ = f.act(.xmppPresence(presence(f, "romeo", nil, available: false)))
        guard case .ghosts(.prepare(let again))? = f.act(.xmppPresence(presence(f, "romeo", .photo(hashA)))).last else {
            Issue.record("no ghost setup on return")
            return
        }
        #expect(f.act(.ghosts(.prepared(again, error: nil))) == [.avatars(.setGhostAvatar(job(f, hashA)))])
    }

    @Test func aFailedGhostSetupDropsTheAvatarSoTheNextPresenceRetries() {
        var f = MachineFixture()
        f.activate()
        guard case .ghosts(.prepare(let setup))? = f.act(.xmppPresence(presence(f, "romeo", .photo(hashA)))).last else {
            Issue.record("no ghost setup")
            return
        }
        #expect(f.act(.ghosts(.prepared(setup, error: .refused("M_FORBIDDEN")))) == [])
        let retried = f.act(.xmppPresence(presence(f, "romeo", .photo(hashA))))
        guard case .ghosts(.prepare(let again))? = retried.last else {
            Issue.record("no second setup: \(retried)")
            return
        }
        #expect(f.act(.ghosts(.prepared(again, error: nil))) == [.avatars(.setGhostAvatar(job(f, hashA)))])
    }

    @Test func theRealJIDIsAskedFirstWhenTheRoomShowsIt() {
        var f = MachineFixture()
        f.activate()
        var shown = presence(f, "romeo", .photo(hashA))
        shown.realJID = JID("romeo@montague.example/phone")
        guard case .ghosts(.prepare(let setup))? = f.act(.xmppPresence(shown)).last else {
            Issue.record("no ghost setup")
            return
        }
        guard case .avatars(.setGhostAvatar(let job))? = f.act(.ghosts(.prepared(setup, error: nil))).first else {
            Issue.record("no avatar job")
            return
        }
        #expect(job.sources == [JID("romeo@montague.example")!, f.muc.with(resource: "romeo")!])
    }

    @Test func aMatrixUsersAvatarGoesToItsPuppetBeforeTheJoinAndOnChange() {
        var f = MachineFixture()
        f.activate()
        var join = f.member(1, f.alice, .join, name: "Alice")
        join.event.avatarURL = "mxc://localhost/a1"
        let first = f.act(.matrixEvents([join]))
        let avatar = AvatarMachine.PuppetAvatar(user: f.alice, occupant: f.puppetJID(f.alice), mxc: "mxc://localhost/a1", nick: nil)
        #expect(first == [.avatars(.setPuppetAvatar(avatar)), .puppets(.join(f.puppetJoin(f.alice, "Alice", then: .membership(eventID: join.event.eventID, seq: 1))))])
        _ = f.act(.puppets(.joinAnswered(f.puppetJoin(f.alice, "Alice", then: .membership(eventID: join.event.eventID, seq: 1)),
                             .joined(nick: "Alice", created: false))))
        // The same avatar again: nothing for it; a new one is announced by the joined puppet (its nick given).
        var same = f.member(2, f.alice, .join, name: "Alice")
        same.event.avatarURL = "mxc://localhost/a1"
        #expect(!f.act(.matrixEvents([same])).contains { if case .avatars(.setPuppetAvatar) = $0 { true } else { false } })
        var changed = f.member(3, f.alice, .join, name: "Alice")
        changed.event.avatarURL = "mxc://localhost/a2"
        #expect(f.act(.matrixEvents([changed])).first == .avatars(.setPuppetAvatar(.init(user: f.alice, occupant: f.puppetJID(f.alice),
                                                                                            mxc: "mxc://localhost/a2", nick: "Alice"))))
        // Removed, then leaving: cleared once.
        let removed = f.member(4, f.alice, .join, name: "Alice")
        #expect(f.act(.matrixEvents([removed])).first == .avatars(.setPuppetAvatar(.init(user: f.alice, occupant: f.puppetJID(f.alice),
                                                                                            mxc: nil, nick: "Alice"))))
        #expect(!f.act(.matrixEvents([f.member(5, f.alice, .leave)])).contains { if case .avatars(.setPuppetAvatar) = $0 { true } else { false } })
    }

    @Test func anActivationReadsTheMembersAvatarsBeforeThePuppetsJoin() {
        var f = MachineFixture(avatars: true)
        _ = f.act(.activate)
        _ = f.act(.botJoinedMatrix(error: nil))
        _ = f.act(.botJoinedMUC(f.botJoin, .joined(nick: "Matrix", created: false)))
        _ = f.act(.catchUp(.featuresRead(RoomFeatures(stanzaIDs: true, archive: true))))
        #expect(f.act(.roomLoaded(f.snapshot(first: true))) == [.puppets(.fetchMembers)])
        // One `/joined_members` answer brings displaynames and avatars. The bot's avatar is not a Matrix user's;
        // alice's goes to her puppet before it joins.
        let members = JoinedMembers(displayNames: [f.alice: "Alice", f.bot: nil],
                                    avatars: [f.alice: "mxc://localhost/a1", f.bot: "mxc://localhost/bot"])
        #expect(f.act(.puppets(.membersFetched(members))) == [
            .avatars(.setPuppetAvatar(.init(user: f.alice, occupant: f.puppetJID(f.alice), mxc: "mxc://localhost/a1", nick: nil))),
            .puppets(.join(f.puppetJoin(f.alice, "Alice", then: .sync))),
        ])
    }
}
