@testable import Bridge
import IsthmusCommon
import Testing

/// The self-service consent handshake as literal sequences, time passed in.
@Suite struct LinkConsentMachineTests {
    typealias Occupant = LinkConsentMachine.Occupant
    let t0 = ContinuousClock.now
    let muc = JID("lounge@conference.localhost")!
    let request = LinkConsentMachine.Request(room: RoomID("!room:localhost")!, requester: UserID("@alice:localhost")!,
                                             muc: JID("lounge@conference.localhost")!, ownerNick: "Juliet",
                                             requesterName: "Alice", roomLabel: "“Lounge” (#lounge:localhost)")
    let juliet = Occupant(nick: "Juliet", affiliation: .owner, occupantID: OccupantID("oid-juliet"))
    let romeo = Occupant(nick: "Romeo", affiliation: .member, occupantID: OccupantID("oid-romeo"))
    let question = "Alice, a moderator of the Matrix room “Lounge” (#lounge:localhost), asks to bridge this room "
        + "(lounge@conference.localhost) with it. Reply yes within 5 minutes to allow; any other reply refuses."

    /// Joined with Romeo and Juliet present, Juliet asked.
    func asked() -> LinkConsentMachine {
        var machine = LinkConsentMachine(request: request, timeout: .seconds(300))
        _ = machine.start()
        _ = machine.presence(romeo, available: true, now: t0)
        _ = machine.presence(juliet, available: true, now: t0)
        _ = machine.joined(now: t0)
        return machine
    }

    @Test func theNamedOwnerSaysYesAndTheLinkIsMade() {
        var machine = LinkConsentMachine(request: request, timeout: .seconds(300))
        #expect(machine.start() == [.joinMUC(muc)])
        #expect(machine.presence(romeo, available: true, now: t0) == [])
        #expect(machine.presence(juliet, available: true, now: t0) == [])
        #expect(machine.joined(now: t0) == [
            .sendPrivate(nick: "Juliet", body: question),
            .scheduleTimeout(at: t0 + .seconds(300)),
            .noticeMatrix("Asked Juliet in lounge@conference.localhost to allow the link; waiting up to 5 minutes."),
        ])
        #expect(machine.askedNick == "Juliet")
        #expect(machine.privateMessage(from: juliet, body: " Yes ", now: t0 + .seconds(10)) == [.link(request)])
        #expect(machine.linked(error: nil) == [
            .sendPrivate(nick: "Juliet", body: "Thank you: this room is now bridged with “Lounge” (#lounge:localhost)."),
            .sendGroupchat("This room is now bridged with the Matrix room “Lounge” (#lounge:localhost), as Juliet allowed."),
            .leaveMUC(muc),
            .noticeMatrix("Linked with lounge@conference.localhost, allowed by Juliet."),
        ])
        #expect(machine.isFinished)
        #expect(machine.timeElapsed(now: t0 + .seconds(300)) == [])
    }

    @Test func theOwnersPresenceMayArriveJustAfterTheJoin() {
        var machine = LinkConsentMachine(request: request, timeout: .seconds(300), presenceGrace: .seconds(2))
        _ = machine.start()
        #expect(machine.joined(now: t0) == [.scheduleTimeout(at: t0 + .seconds(2))])
        #expect(machine.presence(romeo, available: true, now: t0 + .milliseconds(5)) == [])
        #expect(machine.presence(juliet, available: true, now: t0 + .milliseconds(10)).first == .sendPrivate(nick: "Juliet", body: question))
        // The grace timer firing later changes nothing.
        #expect(machine.timeElapsed(now: t0 + .seconds(2)) == [])
    }

    @Test func onlyThatOccupantsPrivateAnswerCounts() {
        var machine = asked()
        #expect(machine.privateMessage(from: romeo, body: "yes", now: t0 + .seconds(1)) == [])
        // The same nick with another occupant-id (the room says it is someone else).
        let impostor = Occupant(nick: "Juliet", affiliation: nil, occupantID: OccupantID("oid-other"))
        #expect(machine.privateMessage(from: impostor, body: "yes", now: t0 + .seconds(2)) == [])
        // Juliet's occupant-id under another nick is not the answer of the asked nick either.
        #expect(machine.privateMessage(from: Occupant(nick: "Jules", affiliation: nil, occupantID: OccupantID("oid-juliet")),
                                       body: "yes", now: t0 + .seconds(2)) == [])
        #expect(machine.privateMessage(from: juliet, body: "y", now: t0 + .seconds(3)) == [.link(request)])
    }

    @Test func withoutOccupantIDsTheRealJIDDecides() {
        var machine = LinkConsentMachine(request: request, timeout: .seconds(300))
        _ = machine.start()
        let owner = Occupant(nick: "Juliet", affiliation: .owner, realJID: JID("juliet@capulet.example"))
        _ = machine.presence(owner, available: true, now: t0)
        _ = machine.joined(now: t0)
        #expect(machine.privateMessage(from: Occupant(nick: "Juliet", affiliation: nil, realJID: JID("mallory@evil.example")),
                                       body: "yes", now: t0 + .seconds(1)) == [])
        #expect(machine.privateMessage(from: Occupant(nick: "Juliet", affiliation: nil, realJID: JID("juliet@capulet.example/phone")),
                                       body: "yes", now: t0 + .seconds(1)) == [.link(request)])
    }

    @Test func theAskedOccupantLeavingOrRenamingRefuses() {
        var machine = asked()
        #expect(machine.presence(romeo, available: false, now: t0 + .seconds(1)) == [])
        #expect(machine.presence(juliet, available: false, now: t0 + .seconds(2)) == [
            .leaveMUC(muc), .noticeMatrix("Not linked: Juliet left lounge@conference.localhost before answering."),
        ])
        #expect(machine.isFinished)
        machine = asked()
        #expect(machine.presence(juliet, available: false, newNick: "Jules", now: t0 + .seconds(2)) == [
            .leaveMUC(muc), .noticeMatrix("Not linked: Juliet changed nick before answering."),
        ])
    }

    @Test func anOwnerDemotedWhileAskedCannotAllowIt() {
        var machine = asked()
        // A presence update keeping the affiliation changes nothing.
        #expect(machine.presence(juliet, available: true, now: t0 + .seconds(1)) == [])
        var demoted = juliet
        demoted.affiliation = .member
        #expect(machine.presence(demoted, available: true, now: t0 + .seconds(2)) == [
            .leaveMUC(muc), .noticeMatrix("Not linked: Juliet is no longer an owner or admin of lounge@conference.localhost."),
        ])
        #expect(machine.privateMessage(from: juliet, body: "yes", now: t0 + .seconds(3)) == [])
    }

    @Test func aDroppedConnectionEndsTheRequest() {
        var machine = asked()
        #expect(machine.connectionLost()
                == [.noticeMatrix("Not linked: the bridge's XMPP connection dropped while asking; try again in a moment.")])
        #expect(machine.isFinished)
        #expect(machine.privateMessage(from: juliet, body: "yes", now: t0 + .seconds(1)) == [])
        // Once linking, the link goes ahead (it needs no XMPP).
        machine = asked()
        _ = machine.privateMessage(from: juliet, body: "yes", now: t0 + .seconds(1))
        #expect(machine.connectionLost() == [])
        #expect(machine.linked(error: nil).last == .noticeMatrix("Linked with lounge@conference.localhost, allowed by Juliet."))
    }

    @Test func aBouncedQuestionRefusesAtOnce() {
        var machine = asked()
        #expect(machine.privateMessageBounced(to: "Romeo", reason: "not-acceptable") == [])
        #expect(machine.privateMessageBounced(to: "Juliet", reason: "private messages are not allowed") == [
            .leaveMUC(muc),
            .noticeMatrix("Not linked: the MUC did not pass the question on to Juliet (private messages are not allowed)."),
        ])
    }

    @Test func anythingElseRefuses() {
        var machine = asked()
        #expect(machine.privateMessage(from: juliet, body: "no way", now: t0 + .seconds(1)) == [
            .sendPrivate(nick: "Juliet", body: "Understood: this room is not bridged."),
            .leaveMUC(muc), .noticeMatrix("Not linked: Juliet did not allow it."),
        ])
        #expect(machine.isFinished)
        #expect(machine.privateMessage(from: juliet, body: "yes", now: t0 + .seconds(2)) == [])
    }

    @Test func noAnswerInTimeRefuses() {
        var machine = asked()
        #expect(machine.timeElapsed(now: t0 + .seconds(299)) == [])
        #expect(machine.timeElapsed(now: t0 + .seconds(300)) == [
            .sendPrivate(nick: "Juliet", body: "The request to bridge this room with “Lounge” (#lounge:localhost) expired."),
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
        _ = machine.presence(Occupant(nick: "Juliet", affiliation: .member), available: true, now: t0)
        #expect(machine.joined(now: t0)
                == [.leaveMUC(muc), .noticeMatrix("Not linked: Juliet is not an owner or admin of lounge@conference.localhost.")])

        machine = LinkConsentMachine(request: request, timeout: .seconds(300), presenceGrace: .seconds(2))
        _ = machine.start()
        _ = machine.presence(romeo, available: true, now: t0)
        #expect(machine.joined(now: t0) == [.scheduleTimeout(at: t0 + .seconds(2))])
        #expect(machine.timeElapsed(now: t0 + .seconds(1)) == [])
        #expect(machine.timeElapsed(now: t0 + .seconds(2))
                == [.leaveMUC(muc), .noticeMatrix("Not linked: Juliet is not in lounge@conference.localhost.")])

        // Someone who was there and left before the join completed is not there.
        machine = LinkConsentMachine(request: request, timeout: .seconds(300))
        _ = machine.start()
        _ = machine.presence(juliet, available: true, now: t0)
        _ = machine.presence(juliet, available: false, now: t0)
        #expect(machine.joined(now: t0) == [.scheduleTimeout(at: t0 + .seconds(2))])

        machine = LinkConsentMachine(request: request, timeout: .seconds(5))
        _ = machine.start()
        _ = machine.presence(Occupant(nick: "Juliet", affiliation: .admin), available: true, now: t0)
        #expect(machine.joined(now: t0).first
                == .sendPrivate(nick: "Juliet", body: "Alice, a moderator of the Matrix room “Lounge” (#lounge:localhost), asks to "
                    + "bridge this room (lounge@conference.localhost) with it. Reply yes within 5 seconds to allow; any other reply refuses."))
    }

    @Test func aFailedJoinOrLinkIsToldToTheRequesterOnly() {
        var machine = LinkConsentMachine(request: request, timeout: .seconds(300))
        _ = machine.start()
        #expect(machine.joinFailed("forbidden") == [.noticeMatrix("Not linked: the bridge cannot join lounge@conference.localhost: forbidden.")])
        machine = asked()
        _ = machine.privateMessage(from: juliet, body: "yes", now: t0 + .seconds(1))
        // The reason names a Matrix room id: it goes to Matrix, and the owner gets a reason-free message.
        #expect(machine.linked(error: "!room:localhost is already linked with other@conference.localhost") == [
            .sendPrivate(nick: "Juliet", body: "The bridge could not link this room after all; the Matrix side was told why."),
            .leaveMUC(muc),
            .noticeMatrix("Not linked: !room:localhost is already linked with other@conference.localhost."),
        ])
    }

    @Test func nothingTheOwnerIsToldNamesAMatrixID() {
        var machine = LinkConsentMachine(request: request, timeout: .seconds(300))
        _ = machine.start()
        _ = machine.presence(juliet, available: true, now: t0)
        var toXMPP = machine.joined(now: t0)
        toXMPP += machine.privateMessage(from: juliet, body: "yes", now: t0 + .seconds(1))
        toXMPP += machine.linked(error: "!room:localhost: @alice:localhost lost power")
        for case .sendPrivate(_, let body) in toXMPP {
            #expect(!body.contains("@alice:localhost") && !body.contains("!room:localhost"), "\(body)")
        }
    }
}
