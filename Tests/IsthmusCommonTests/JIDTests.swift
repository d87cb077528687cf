import IsthmusCommon
import Testing

@Suite struct JIDTests {
    @Test func parsesAllThreeParts() throws {
        let jid = try #require(JID("room@conference.example.org/Alice"))
        #expect(jid.localpart == "room")
        #expect(jid.domain == "conference.example.org")
        #expect(jid.resource == "Alice")
        #expect(jid.description == "room@conference.example.org/Alice")
        #expect(!jid.isBare)
    }

    @Test func parsesDomainOnlyAndBareForms() throws {
        let domain = try #require(JID("bridge.localhost"))
        #expect(domain.localpart == nil && domain.resource == nil && domain.isBare)
        let bare = try #require(JID("alice@localhost"))
        #expect(bare.localpart == "alice" && bare.domain == "localhost" && bare.resource == nil)
        let domainWithResource = try #require(JID("localhost/admin"))
        #expect(domainWithResource.localpart == nil && domainWithResource.resource == "admin")
    }

    @Test func splitsAtTheFirstSlashThenTheAt() throws {
        // RFC 7622 §3.2: the resource is everything after the first '/', and may contain '@' and '/'.
        let jid = try #require(JID("room@muc.localhost/nick@home/phone"))
        #expect(jid.localpart == "room")
        #expect(jid.domain == "muc.localhost")
        #expect(jid.resource == "nick@home/phone")
    }

    @Test(arguments: [
        "", "@localhost", "alice@", "alice@localhost/", "/resource", "a@b@localhost",
        "al ice@localhost", "al\"ice@localhost", "al&ice@localhost", "al'ice@localhost", "al:ice@localhost",
        "al<ice@localhost", "al>ice@localhost", "al\u{7}ice@localhost", "alice@local host", "alice@.localhost",
        "alice@localhost.", "alice@local..host", "alice@local_host", "alice@localhost/nick\u{0}",
    ])
    func rejectsInvalidJIDs(_ text: String) {
        #expect(JID(text) == nil, "accepted \(text.debugDescription)")
    }

    @Test func limitsEachPartTo1023Bytes() {
        let longest = String(repeating: "a", count: 1023)
        let tooLong = String(repeating: "a", count: 1024)
        #expect(JID("\(longest)@localhost") != nil)
        #expect(JID("\(tooLong)@localhost") == nil)
        #expect(JID("alice@localhost/\(longest)") != nil)
        #expect(JID("alice@localhost/\(tooLong)") == nil)
        // 1023 bytes, not characters: 512 two-byte 'é' are 1024 bytes.
        #expect(JID("alice@localhost/\(String(repeating: "é", count: 512))") == nil)
        let longLabel = String(repeating: "a", count: 1019)
        #expect(JID(localpart: nil, domain: "\(longLabel).org") != nil)
        #expect(JID(localpart: nil, domain: "\(longLabel)a.org") == nil)
    }

    @Test func foldsLocalpartAndDomainButNotResource() throws {
        let jid = try #require(JID("Room@Conference.Example.ORG/Alice Smith"))
        #expect(jid.localpart == "room")
        #expect(jid.domain == "conference.example.org")
        #expect(jid.resource == "Alice Smith")
        #expect(jid == JID("room@conference.example.org/Alice Smith"))
        #expect(jid != JID("room@conference.example.org/alice smith"))
    }

    @Test func nonASCIITextTakesTheSameRulesAsASCII() throws {
        // ASCII text is checked byte by byte (the hot path); anything else character by character: same answers.
        let jid = try #require(JID("Ünïcode@Exämple.ORG/Ñick"))
        #expect(jid.localpart == "ünïcode")
        #expect(jid.domain == "exämple.org")
        #expect(jid.resource == "Ñick")
        for text in ["é\r\n@localhost", "é@local..hôst", "é@.hôst", "é@hôst.", "é:x@hôst", "é@hôst/ni\u{7f}ck", "a\r\nb@localhost"] {
            #expect(JID(text) == nil, "accepted \(text.debugDescription)")
        }
    }

    @Test func bareDropsTheResource() throws {
        let full = try #require(JID("room@muc.localhost/nick"))
        #expect(full.bare == JID("room@muc.localhost"))
        #expect(full.bare.isBare)
        let bare = try #require(JID("room@muc.localhost"))
        #expect(bare.bare == bare)
    }

    @Test func withResourceReplacesOrAddsTheResource() throws {
        let room = try #require(JID("room@muc.localhost"))
        #expect(room.with(resource: "Matrix")?.description == "room@muc.localhost/Matrix")
        let occupant = try #require(JID("room@muc.localhost/old"))
        #expect(occupant.with(resource: "New Nick")?.description == "room@muc.localhost/New Nick")
        #expect(room.with(resource: "") == nil)
        #expect(room.with(resource: "bad\nnick") == nil)
    }

    @Test func buildsFromParts() {
        #expect(JID(localpart: "Alice", domain: "LocalHost", resource: "Phone")?.description == "alice@localhost/Phone")
        #expect(JID(localpart: "", domain: "localhost") == nil)
        #expect(JID(localpart: "a@b", domain: "localhost") == nil)
        #expect(JID(localpart: nil, domain: "") == nil)
    }

    @Test func acceptsIPLiteralDomains() {
        #expect(JID("alice@127.0.0.1")?.domain == "127.0.0.1")
        #expect(JID("alice@[::1]/res")?.domain == "[::1]")
    }
}
