@testable import Bridge
import IsthmusCommon
import Testing

/// The self-service consent handshake as literal sequences, time passed in.
@Suite struct LinkConsentMachineTests {
    typealias Occupant = LinkConsentMachine.Occupant
    let t0 = ContinuousClock.now
    let muc = JID("lounge@conference.localhost")!
    let request = LinkConsentMachine.Request(room: RoomID("!room:localhost")!, requester: UserID("@alice:localhost")!,
                                             muc: JID("lounge@conference.localhost")!, ownerNick: "Juliet")
    let juliet = Occupant(nick: "Juliet", affiliation: .owner, occupantID: OccupantID("oid-juliet"))
    let romeo = Occupant(nick: "Romeo", affiliation: .member, occupantID: OccupantID("oid-romeo"))

    func asked() -> LinkConsentMachine {
        var machine = LinkConsentMachine(request: request, timeout: .seconds(300))
        _ = machine.start()
        _ = machine.joined([romeo, juliet], now: t0)
        return machine
    }

    @Test func theNamedOwnerSaysYesAndTheLinkIsMade() {
        var machine = LinkConsentMachine(request: request, timeout: .seconds(300))
        #expect(machine.start() == [.joinMUC(muc)])
        #expect(machine.joined([romeo, juliet], now: t0) == [
            .sendPrivate(nick: "Juliet", body: "@alice:localhost asks to bridge lounge@conference.localhost with the Matrix room "
                + "!room:localhost. Reply yes within 5 minutes to allow; anything else refuses."),
            .scheduleTimeout(at: t0 + .seconds(300)),
            .noticeMatrix("Asked Juliet in lounge@conference.localhost to allow the link; waiting up to 5 minutes."),
        ])
        #expect(machine.privateMessage(from: juliet, body: " Yes ", now: t0 + .seconds(10)) == [.leaveMUC(muc), .link(request)])
        #expect(machine.linked(error: nil) == [
            .noticeMatrix("Linked with lounge@conference.localhost, allowed by Juliet."),
            .sendPrivate(nick: "Juliet", body: "Thank you: lounge@conference.localhost is now bridged with !room:localhost."),
        ])
        #expect(machine.isFinished)
        #expect(machine.timeElapsed(now: t0 + .seconds(300)) == [])
    }

    @Test func onlyThatOccupantsPrivateAnswerCounts() {
        var machine = asked()
        #expect(machine.privateMessage(from: romeo, body: "yes", now: t0 + .seconds(1)) == [])
        // Someone who took the nick after Juliet left is another occupant.
        let impostor = Occupant(nick: "Juliet", affiliation: .none, occupantID: OccupantID("oid-other"))
        #expect(machine.privateMessage(from: impostor, body: "yes", now: t0 + .seconds(2)) == [])
        #expect(machine.privateMessage(from: juliet, body: "y", now: t0 + .seconds(3)) == [.leaveMUC(muc), .link(request)])
    }

    @Test func anythingElseRefuses() {
        var machine = asked()
        #expect(machine.privateMessage(from: juliet, body: "no way", now: t0 + .seconds(1)) == [
            .sendPrivate(nick: "Juliet", body: "Understood: lounge@conference.localhost is not bridged."),
            .leaveMUC(muc), .noticeMatrix("Not linked: Juliet did not allow it."),
        ])
        #expect(machine.isFinished)
        #expect(machine.privateMessage(from: juliet, body: "yes", now: t0 + .seconds(2)) == [])
    }

    @Test func noAnswerInTimeRefuses() {
        var machine = asked()
        #expect(machine.timeElapsed(now: t0 + .seconds(299)) == [])
        #expect(machine.timeElapsed(now: t0 + .seconds(300)) == [
            .sendPrivate(nick: "Juliet", body: "The request to bridge lounge@conference.localhost with !room:localhost expired."),
            .leaveMUC(muc), .noticeMatrix("Not linked: Juliet did not answer within 5 minutes."),
        ])
    }

    @Test func aLateYesIsATimeout() {
        var machine = asked()
        let actions = machine.privateMessage(from: juliet, body: "yes", now: t0 + .seconds(301))
        #expect(actions.last == .noticeMatrix("Not linked: Juliet did not answer within 5 minutes."))
        #expect(!actions.contains(.link(request)))
    }

    @Test func theNamedNickMustBeAnOwnerOrAdminAndPresent() {
        var machine = LinkConsentMachine(request: request, timeout: .seconds(300))
        _ = machine.start()
        #expect(machine.joined([romeo, Occupant(nick: "Juliet", affiliation: .member)], now: t0)
                == [.leaveMUC(muc), .noticeMatrix("Not linked: Juliet is not an owner or admin of lounge@conference.localhost.")])
        machine = LinkConsentMachine(request: request, timeout: .seconds(300))
        _ = machine.start()
        #expect(machine.joined([romeo], now: t0)
                == [.leaveMUC(muc), .noticeMatrix("Not linked: Juliet is not in lounge@conference.localhost.")])
        machine = LinkConsentMachine(request: request, timeout: .seconds(5))
        _ = machine.start()
        #expect(machine.joined([Occupant(nick: "Juliet", affiliation: .admin)], now: t0).first
                == .sendPrivate(nick: "Juliet", body: "@alice:localhost asks to bridge lounge@conference.localhost with the Matrix room "
                    + "!room:localhost. Reply yes within 5 seconds to allow; anything else refuses."))
    }

    @Test func aFailedJoinOrLinkIsToldToTheRequester() {
        var machine = LinkConsentMachine(request: request, timeout: .seconds(300))
        _ = machine.start()
        #expect(machine.joinFailed("forbidden") == [.noticeMatrix("Not linked: the bridge cannot join lounge@conference.localhost: forbidden")])
        machine = asked()
        _ = machine.privateMessage(from: juliet, body: "yes", now: t0 + .seconds(1))
        #expect(machine.linked(error: "!room:localhost is already linked with other@conference.localhost")
                == [.noticeMatrix("Not linked: !room:localhost is already linked with other@conference.localhost")])
    }
}
