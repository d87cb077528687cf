import TestSupport
import Testing
import XMLStream
import XMPP

/// XEP-0198's nonzas as written on the wire, and the session's counts: acks, wrap-around, too-high counts, resumption.
@Suite struct StreamManagementTests {
    typealias Session = StreamManagement<String>

    func nonza(_ xml: String) throws -> StreamManagementNonza? { try StreamManagementNonza(element: TestXML.element(xml)) }

    @Test func theXEPsExamplesReadAsTheirNonzas() throws {
        let sm = "xmlns='urn:xmpp:sm:3'"
        #expect(try nonza("<enable \(sm) resume='true' max='600'/>") == .enable(resume: true, max: 600))
        #expect(try nonza("<enabled \(sm) id='some-long-sm-id' location='[2001:41D0:1:A49b::1]:9222' resume='1'/>")
                == .enabled(id: "some-long-sm-id", resume: true, max: nil, location: "[2001:41D0:1:A49b::1]:9222"))
        #expect(try nonza("<enabled \(sm)/>") == .enabled(id: nil, resume: false, max: nil, location: nil))
        #expect(try nonza("<r \(sm)/>") == .requestAck)
        #expect(try nonza("<a \(sm) h='4294967295'/>") == .ack(h: .max))
        #expect(try nonza("<resume \(sm) h='1' previd='some-long-sm-id'/>") == .resume(previd: "some-long-sm-id", h: 1))
        #expect(try nonza("<resumed \(sm) h='3' previd='some-long-sm-id'/>") == .resumed(previd: "some-long-sm-id", h: 3))
        #expect(try nonza("<failed \(sm) h='22'><item-not-found xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>")
                == .failed(.itemNotFound, h: 22))
        #expect(try nonza("<failed \(sm)><unexpected-request xmlns='urn:ietf:params:xml:ns:xmpp-stanzas'/></failed>")
                == .failed(.unexpectedRequest, h: nil))
        #expect(try nonza("<message xmlns='jabber:client'/>") == nil, "a stanza is not a nonza")
    }

    @Test func malformedCountsAreRefusedWithWhatIsWrong() {
        let sm = "xmlns='urn:xmpp:sm:3'"
        #expect(throws: StanzaParseError(element: "a", .invalidValue(field: "h", value: "4294967296"))) {
            try nonza("<a \(sm) h='4294967296'/>")
        }
        #expect(throws: StanzaParseError(element: "a", .missingAttribute("h"))) { try nonza("<a \(sm)/>") }
        #expect(throws: StanzaParseError(element: "resume", .missingAttribute("previd"))) { try nonza("<resume \(sm) h='1'/>") }
        #expect(throws: StanzaParseError(element: "enable", .invalidValue(field: "max", value: "-5"))) {
            try nonza("<enable \(sm) max='-5'/>")
        }
        #expect(throws: StanzaParseError(element: "bogus", .unexpectedElement(name: "bogus", namespace: "urn:xmpp:sm:3"))) {
            try nonza("<bogus \(sm)/>")
        }
    }

    @Test func everyNonzaWritesWhatReadsBackAsItself() throws {
        let all: [StreamManagementNonza] = [
            .enable(resume: true, max: 300), .enable(resume: false, max: nil),
            .enabled(id: "id-1", resume: true, max: 300, location: "xmpp.example.org:5222"), .enabled(id: nil, resume: false, max: nil, location: nil),
            .failed(.itemNotFound, h: 7), .failed(nil, h: nil), .requestAck, .ack(h: 0), .ack(h: .max),
            .resume(previd: "id-1", h: 9), .resumed(previd: "id-1", h: 10),
        ]
        for nonza in all {
            let xml = XMLSerializer.string(of: nonza.element, defaultNamespace: "jabber:client")
            #expect(try self.nonza(xml) == nonza, "\(xml)")
        }
        #expect(XMLSerializer.string(of: StreamManagementNonza.ack(h: 5).element, defaultNamespace: "jabber:client")
                == "<a xmlns='urn:xmpp:sm:3' h='5'/>")
    }

    @Test func anAckConfirmsTheOldestAndNotMoreThanWasSent() throws {
        var session = Session(enabled: "id-1", resumable: true, location: nil)
        for stanza in ["m1", "m2", "m3"] { session.sent(stanza) }
        #expect(session.outboundSent == 3)
        #expect(try session.acknowledged(h: 2) == ["m1", "m2"])
        #expect(session.unacknowledged == ["m3"])
        #expect(try session.acknowledged(h: 2) == [], "a repeated ack confirms nothing new")
        #expect(throws: StreamManagementError.handledCountTooHigh(h: 5, sent: 3)) { try session.acknowledged(h: 5) }
        #expect(session.unacknowledged == ["m3"], "a refused ack changes nothing")
        #expect(try session.acknowledged(h: 3) == ["m3"])
        #expect(session.unacknowledged.isEmpty)
    }

    @Test func theCountsWrapAt2To32() throws {
        // A long session, as the store kept it: 2³²−2 of ours acknowledged, as many of the server's handled.
        var session = Session(sessionID: "id-1", location: nil, inboundHandled: .max - 1, outboundAcknowledged: .max - 1,
                              unacknowledged: [])
        for stanza in ["m1", "m2", "m3"] { session.sent(stanza) }
        #expect(session.outboundSent == 1, "2³²−2 + 3 wraps to 1")
        #expect(try session.acknowledged(h: .max) == ["m1"])
        #expect(try session.acknowledged(h: 1) == ["m2", "m3"], "h wrapped past 2³²−1 to 1")
        #expect(throws: StreamManagementError.handledCountTooHigh(h: 2, sent: 1)) { try session.acknowledged(h: 2) }

        for _ in 0..<3 { session.handled() }
        #expect(session.ack == .ack(h: 1), "2³²−2 + 3 handled wraps to 1")
    }

    @Test func onlyHandledStanzasCountInOurAck() {
        var session = Session(enabled: "id-1", resumable: true, location: nil)
        #expect(session.ack == .ack(h: 0))
        session.handled()
        session.handled()
        #expect(session.ack == .ack(h: 2))
        #expect(session.resumeRequest == .resume(previd: "id-1", h: 2))
        #expect(Session(enabled: "id-2", resumable: false, location: "x:1").resumeRequest == nil,
                "without resume='true' there is no session to resume")
    }

    @Test func ackRequestsGoOutEveryNStanzas() throws {
        var session = Session(enabled: "id-1", resumable: true, location: nil)
        for stanza in ["m1", "m2"] { session.sent(stanza) }
        #expect(!session.shouldRequestAck(every: 3))
        session.sent("m3")
        #expect(session.shouldRequestAck(every: 3))
        session.ackRequested()
        #expect(!session.shouldRequestAck(every: 3))
        _ = try session.acknowledged(h: 3)
        for stanza in ["m4", "m5", "m6"] { session.sent(stanza) }
        #expect(session.shouldRequestAck(every: 3), "the acked stanzas no longer count against the next request")
    }

    @Test func aResumptionResendsWhatTheServerNeverHandledAndKeepsCounting() throws {
        var session = Session(enabled: "id-1", resumable: true, location: nil)
        for stanza in ["m1", "m2", "m3", "m4"] { session.sent(stanza) }
        _ = try session.acknowledged(h: 1)
        let (confirmed, resend) = try session.resumed(h: 2)
        #expect(confirmed == ["m2"] && resend == ["m3", "m4"])
        #expect(session.outboundSent == 4, "the resent stanzas are the same ones: nothing counted twice")
        #expect(try session.acknowledged(h: 4) == ["m3", "m4"])
        #expect(throws: StreamManagementError.handledCountTooHigh(h: 9, sent: 4)) { try session.resumed(h: 9) }
    }

    @Test func aFailedResumptionSaysWhatIsConfirmedAndWhatIsUnknown() throws {
        var session = Session(enabled: "id-1", resumable: true, location: nil)
        for stanza in ["m1", "m2", "m3"] { session.sent(stanza) }
        #expect(session.resumeFailed(h: 1) == (confirmed: ["m1"], unknown: ["m2", "m3"]))
        #expect(session.resumeFailed(h: nil) == (confirmed: [], unknown: ["m1", "m2", "m3"]))
        #expect(session.resumeFailed(h: 7) == (confirmed: [], unknown: ["m1", "m2", "m3"]), "an impossible h confirms nothing")
    }

    /// A session restored from the store may lag behind the last stanzas sent before a crash: the server's first `h`
    /// may count more than the store listed (those went), within a bound; a live session's may not.
    @Test func aRestoredSessionsFirstCountMayRunAheadOfWhatTheStoreKept() throws {
        var restored = StreamManagement<String>(sessionID: "s", location: nil, inboundHandled: 3, outboundAcknowledged: UInt32.max - 1,
                                                unacknowledged: ["a"])
        let (confirmed, resend) = try restored.resumed(h: 3)   // wraps: max-1, then a, then four the store never saw
        #expect(confirmed == ["a"] && resend.isEmpty)
        #expect(restored.outboundAcknowledged == 3)
        restored.sent("b")
        #expect(throws: StreamManagementError.handledCountTooHigh(h: 5, sent: 4)) { try restored.acknowledged(h: 5) }

        var far = StreamManagement<String>(sessionID: "s", location: nil, inboundHandled: 0, outboundAcknowledged: 0, unacknowledged: [])
        #expect(throws: StreamManagementError.self) { try far.resumed(h: 20_000) }
        var live = StreamManagement<String>(enabled: "s", resumable: true, location: nil)
        live.sent("a")
        #expect(throws: StreamManagementError.handledCountTooHigh(h: 2, sent: 1)) { try live.acknowledged(h: 2) }
    }
}
