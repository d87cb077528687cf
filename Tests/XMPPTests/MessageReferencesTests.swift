import IsthmusCommon
import TestSupport
import Testing
import XMLStream
import XMPP

/// XEP-0461/0308/0424/0425/0444/0428/0393/0334 elements read into ``MessageReferences`` and written back (RICH.md A, 2–5).
@Suite struct MessageReferencesTests {
    /// The references of a groupchat message with `children` (raw XML) after its body.
    func references(_ children: String) throws -> MessageReferences {
        let message = try Message(element: TestXML.element("""
            <message from='room@conference.localhost/romeo' type='groupchat' id='m1'><body>b</body>\(children)</message>
            """))
        return message.references
    }

    /// An element as it goes out inside a stanza (its own `xmlns` written).
    func wire(_ element: XElement) -> String {
        XMLSerializer.string(of: element, defaultNamespace: "jabber:component:accept")
    }

    // MARK: Replies

    @Test func aReplyIsReadWithAndWithoutTo() throws {
        let withTo = try references("<reply xmlns='urn:xmpp:reply:0' to='room@conference.localhost/juliet' id='S1'/>")
        #expect(withTo.reply == .init(to: JID("room@conference.localhost/juliet"), id: "S1"))
        #expect(withTo.refersToAnother)
        let withoutTo = try references("<reply xmlns='urn:xmpp:reply:0' id='S2'/>")
        #expect(withoutTo.reply == .init(to: nil, id: "S2"))
        // No id: nothing can be resolved, so it is no reply.
        #expect(try references("<reply xmlns='urn:xmpp:reply:0' to='room@conference.localhost/juliet'/>").reply == nil)
        #expect(try references("<reply xmlns='urn:xmpp:reply:0' id=''/>").reply == nil)
        // The wrong namespace is not XEP-0461.
        #expect(try references("<reply xmlns='urn:xmpp:reply:1' id='S1'/>").reply == nil)
        #expect(try !references("").refersToAnother)
    }

    @Test func theFirstReplyWins() throws {
        let refs = try references("""
            <reply xmlns='urn:xmpp:reply:0' id='A'/><reply xmlns='urn:xmpp:reply:0' id='B'/>
            """)
        #expect(refs.reply?.id == "A")
    }

    // MARK: Corrections

    @Test func aCorrectionNamesTheOriginalsIDAttribute() throws {
        #expect(try references("<replace xmlns='urn:xmpp:message-correct:0' id='orig-1'/>").replaces == "orig-1")
        #expect(try references("<replace xmlns='urn:xmpp:message-correct:0'/>").replaces == nil)
        #expect(try references("<replace xmlns='urn:xmpp:message-correct:0' id='orig-1'/>").refersToAnother)
    }

    // MARK: Retractions

    @Test func aCurrentRetractionNamesTheStanzaID() throws {
        let refs = try references("<retract xmlns='urn:xmpp:message-retract:1' id='S9'/>")
        #expect(refs.retractions == [.current(id: "S9")])
        #expect(refs.retraction == .current(id: "S9"))
        #expect(refs.moderation == nil)
        #expect(refs.refersToAnother)
    }

    @Test func aLegacyRetractionInsideApplyToNamesTheOriginID() throws {
        let refs = try references("""
            <apply-to xmlns='urn:xmpp:fasten:0' id='origin-7'><retract xmlns='urn:xmpp:message-retract:0'/></apply-to>
            """)
        #expect(refs.retractions == [.legacy(originID: "origin-7")])
        #expect(refs.retraction?.id == "origin-7")
        // apply-to without a retraction (another fastening) is not one.
        #expect(try references("""
            <apply-to xmlns='urn:xmpp:fasten:0' id='origin-7'><external xmlns='urn:xmpp:fasten:0' name='body'/></apply-to>
            """).retractions.isEmpty)
        // A :1 retract inside apply-to is neither form.
        #expect(try references("""
            <apply-to xmlns='urn:xmpp:fasten:0' id='origin-7'><retract xmlns='urn:xmpp:message-retract:1'/></apply-to>
            """).retractions.isEmpty)
    }

    @Test func bothFormsTogetherPreferTheCurrentOne() throws {
        let refs = try references("""
            <apply-to xmlns='urn:xmpp:fasten:0' id='origin-7'><retract xmlns='urn:xmpp:message-retract:0'/></apply-to>\
            <retract xmlns='urn:xmpp:message-retract:1' id='S7'/>
            """)
        #expect(refs.retractions == [.legacy(originID: "origin-7"), .current(id: "S7")])
        #expect(refs.retraction == .current(id: "S7"))
    }

    // MARK: Moderation

    @Test func aCurrentModerationIsReadWithItsModeratorAndReason() throws {
        let refs = try references("""
            <retract xmlns='urn:xmpp:message-retract:1' id='S3'>\
            <moderated xmlns='urn:xmpp:message-moderate:1' by='room@conference.localhost/mod'>\
            <occupant-id xmlns='urn:xmpp:occupant-id:0' id='occ'/></moderated>\
            <reason>spam</reason></retract>
            """)
        #expect(refs.moderation == .init(stanzaID: "S3", by: JID("room@conference.localhost/mod"), reason: "spam"))
        // A moderation is not also a retraction by the sender.
        #expect(refs.retractions.isEmpty)
        #expect(refs.refersToAnother)
    }

    @Test func theProsodyModulesModerationFormIsRead() throws {
        let refs = try references("""
            <apply-to xmlns='urn:xmpp:fasten:0' id='S4'>\
            <moderated xmlns='urn:xmpp:message-moderate:0' by='room@conference.localhost/mod'>\
            <retract xmlns='urn:xmpp:message-retract:0'/><reason>off topic</reason></moderated></apply-to>
            """)
        #expect(refs.moderation == .init(stanzaID: "S4", by: JID("room@conference.localhost/mod"), reason: "off topic"))
        #expect(refs.retractions.isEmpty)
        // Without the inner retract it is not a moderation (nor a retraction).
        let bare = try references("""
            <apply-to xmlns='urn:xmpp:fasten:0' id='S4'><moderated xmlns='urn:xmpp:message-moderate:0'/></apply-to>
            """)
        #expect(bare.moderation == nil)
        #expect(bare.retractions.isEmpty)
        // Without by and reason.
        let plain = try references("""
            <apply-to xmlns='urn:xmpp:fasten:0' id='S5'><moderated xmlns='urn:xmpp:message-moderate:0'>\
            <retract xmlns='urn:xmpp:message-retract:0'/></moderated></apply-to>
            """)
        #expect(plain.moderation == .init(stanzaID: "S5", by: nil, reason: nil))
    }

    // MARK: Reactions

    @Test func reactionsAreDeduplicatedAndEmptyOrOverlongKeysDropped() throws {
        let long = String(repeating: "a", count: MessageReferences.maxReactionKeyScalars + 1)
        let atLimit = String(repeating: "b", count: MessageReferences.maxReactionKeyScalars)
        let refs = try references("""
            <reactions xmlns='urn:xmpp:reactions:0' id='S1'>\
            <reaction>👍</reaction><reaction>🐢</reaction><reaction>👍</reaction><reaction></reaction>\
            <reaction>\(long)</reaction><reaction>\(atLimit)</reaction></reactions>
            """)
        #expect(refs.reactions == .init(id: "S1", keys: ["👍", "🐢", atLimit]))
        #expect(refs.refersToAnother)
    }

    @Test func anEmptySetIsKeptItRemovesEverything() throws {
        let refs = try references("<reactions xmlns='urn:xmpp:reactions:0' id='S1'/>")
        #expect(refs.reactions == .init(id: "S1", keys: []))
        #expect(try references("<reactions xmlns='urn:xmpp:reactions:0'><reaction>👍</reaction></reactions>").reactions == nil)
    }

    @Test func aSetLargerThanTheLimitIsCut() throws {
        let keys = (0..<(MessageReferences.maxReactions + 10)).map { "k\($0)" }
        // Duplicates do not count towards the limit.
        let xml = "<reactions xmlns='urn:xmpp:reactions:0' id='S1'><reaction>k0</reaction>"
            + keys.map { "<reaction>\($0)</reaction>" }.joined() + "</reactions>"
        let refs = try references(xml)
        #expect(refs.reactions?.keys == Array(keys.prefix(MessageReferences.maxReactions)))
    }

    // MARK: Fallbacks, unstyled, store

    @Test func fallbackRangesAreReadPerFeature() throws {
        let refs = try references("""
            <fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'>\
            <body start='0' end='5'/><body start='10' end='12'/></fallback>\
            <fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:message-retract:1'/>
            """)
        #expect(refs.fallbacks == [.init(feature: "urn:xmpp:reply:0", ranges: [0..<5, 10..<12]),
                                   .init(feature: "urn:xmpp:message-retract:1", ranges: nil)])
        #expect(refs.fallbackRanges(for: "urn:xmpp:reply:0") == .some([0..<5, 10..<12]))
        // Declared without ranges: the whole body.
        #expect(refs.fallbackRanges(for: "urn:xmpp:message-retract:1") == .some(nil))
        // Not declared at all.
        #expect(refs.fallbackRanges(for: "urn:xmpp:reactions:0") == nil)
        // A fallback is no reference by itself.
        #expect(!refs.refersToAnother)
        // Without `for` it says nothing.
        #expect(try references("<fallback xmlns='urn:xmpp:fallback:0'><body start='0' end='1'/></fallback>").fallbacks.isEmpty)
    }

    @Test func aBodyWithoutOffsetsCoversTheWholeBody() throws {
        let refs = try references("""
            <fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'><body start='0' end='3'/><body/></fallback>
            """)
        #expect(refs.fallbackRanges(for: "urn:xmpp:reply:0") == .some(nil))
    }

    @Test func badOffsetsAreIgnoredNotReadAsTheWholeBody() throws {
        // Reversed, negative and non-numeric ranges are malformed: they are dropped, and the good ones kept. A
        // malformed range must not turn the whole body into fallback (a reply's text would be removed).
        let refs = try references("""
            <fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'>\
            <body start='5' end='2'/><body start='-3' end='2'/><body start='x' end='4'/><body start='1' end='y'/>\
            <body start='0' end='2'/></fallback>
            """)
        #expect(refs.fallbackRanges(for: "urn:xmpp:reply:0") == .some([0..<2]))
        let onlyBad = try references("""
            <fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'><body start='x' end='4'/></fallback>
            """)
        #expect(onlyBad.fallbackRanges(for: "urn:xmpp:reply:0") == .some([]))
    }

    @Test func unstyledAndStoreAreRead() throws {
        let refs = try references("<unstyled xmlns='urn:xmpp:styling:0'/><store xmlns='urn:xmpp:hints'/>")
        #expect(refs.unstyled)
        #expect(refs.store)
        #expect(!refs.refersToAnother)
        let none = try references("<no-store xmlns='urn:xmpp:hints'/><unstyled xmlns='urn:xmpp:styling:1'/>")
        #expect(!none.unstyled)
        #expect(!none.store)
    }

    // MARK: Writing

    @Test func everyElementIsWrittenInTheWireForm() {
        let refs = MessageReferences(
            reply: .init(to: JID("room@conference.localhost/juliet"), id: "S1"), replaces: "orig",
            retractions: [.current(id: "S2"), .legacy(originID: "o2")], reactions: .init(id: "S3", keys: ["👍", "🐢"]),
            fallbacks: [.init(feature: "urn:xmpp:reply:0", ranges: [0..<4]), .init(feature: "urn:xmpp:message-retract:1", ranges: nil)],
            unstyled: true, store: true)
        let xml = refs.elements.map(wire)
        #expect(xml == [
            "<reply xmlns='urn:xmpp:reply:0' to='room@conference.localhost/juliet' id='S1'/>",
            "<replace xmlns='urn:xmpp:message-correct:0' id='orig'/>",
            "<retract xmlns='urn:xmpp:message-retract:1' id='S2'/>",
            "<apply-to xmlns='urn:xmpp:fasten:0' id='o2'><retract xmlns='urn:xmpp:message-retract:0'/></apply-to>",
            "<reactions xmlns='urn:xmpp:reactions:0' id='S3'><reaction>👍</reaction><reaction>🐢</reaction></reactions>",
            "<fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:reply:0'><body start='0' end='4'/></fallback>",
            "<fallback xmlns='urn:xmpp:fallback:0' for='urn:xmpp:message-retract:1'/>",
            "<unstyled xmlns='urn:xmpp:styling:0'/>",
            "<store xmlns='urn:xmpp:hints'/>",
        ])
        // A reply without `to` leaves the attribute out; nothing set writes nothing.
        #expect(MessageReferences(reply: .init(to: nil, id: "S1")).elements.map(wire)
                == ["<reply xmlns='urn:xmpp:reply:0' id='S1'/>"])
        #expect(MessageReferences().elements.isEmpty)
    }

    @Test func writtenElementsReadBackTheSame() throws {
        let all = [
            MessageReferences(reply: .init(to: JID("room@conference.localhost/juliet"), id: "S1"),
                              fallbacks: [.init(feature: "urn:xmpp:reply:0", ranges: [0..<4, 6..<9])]),
            MessageReferences(reply: .init(to: nil, id: "S1")),
            MessageReferences(replaces: "orig"),
            MessageReferences(retractions: [.current(id: "S2"), .legacy(originID: "o2")],
                              fallbacks: [.init(feature: "urn:xmpp:message-retract:1", ranges: nil)], store: true),
            MessageReferences(reactions: .init(id: "S3", keys: ["👍", "🐢"]), store: true),
            MessageReferences(reactions: .init(id: "S3", keys: []), store: true),
            MessageReferences(unstyled: true),
        ]
        for refs in all {
            // Through the serializer and the parser, as on the wire.
            let message = Message(type: .groupchat, to: JID("room@conference.localhost")!, body: "b", extensions: refs.elements)
            let parsed = try Message(element: TestXML.element(XMLSerializer.string(of: message.element)))
            #expect(parsed.references == refs)
        }
    }

    // MARK: Hostile input

    @Test func idsLongerThan1024BytesAreIgnored() throws {
        let long = String(repeating: "x", count: 1025)
        let limit = String(repeating: "y", count: 1024)
        let refs = try references("""
            <reply xmlns='urn:xmpp:reply:0' id='\(long)'/>\
            <replace xmlns='urn:xmpp:message-correct:0' id='\(long)'/>\
            <retract xmlns='urn:xmpp:message-retract:1' id='\(long)'/>\
            <apply-to xmlns='urn:xmpp:fasten:0' id='\(long)'><retract xmlns='urn:xmpp:message-retract:0'/></apply-to>\
            <reactions xmlns='urn:xmpp:reactions:0' id='\(long)'><reaction>👍</reaction></reactions>\
            <retract xmlns='urn:xmpp:message-retract:1' id='\(long)'><moderated xmlns='urn:xmpp:message-moderate:1'/></retract>
            """)
        #expect(refs == MessageReferences())
        #expect(!refs.refersToAnother)
        // Multi-byte: 342 × 3 bytes = 1026 bytes in 342 characters.
        let wide = String(repeating: "€", count: 342)
        #expect(try references("<replace xmlns='urn:xmpp:message-correct:0' id='\(wide)'/>").replaces == nil)
        #expect(try references("<replace xmlns='urn:xmpp:message-correct:0' id='\(limit)'/>").replaces == limit)
    }
}
