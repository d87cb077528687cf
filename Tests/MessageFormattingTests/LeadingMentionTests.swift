import MessageFormatting
import Testing

/// `Nick: text` / `Nick, text` at the start of an XMPP groupchat body.
@Suite struct LeadingMentionTests {
    @Test func colonAndComma() throws {
        let colon = try #require(LeadingMention.find(in: "Alice: hi", nicks: ["Bob", "Alice"]))
        #expect(colon.nick == "Alice")
        #expect(colon.codePointRange == 0..<5)
        #expect("Alice: hi"[colon.range] == "Alice")
        #expect(LeadingMention.find(in: "Alice, hi", nicks: ["Alice"])?.nick == "Alice")
        #expect(LeadingMention.find(in: "Alice:", nicks: ["Alice"])?.nick == "Alice")
        #expect(LeadingMention.find(in: "Alice:\nnext line", nicks: ["Alice"])?.nick == "Alice")
        #expect(LeadingMention.find(in: "Alice:\r\nnext line", nicks: ["Alice"])?.nick == "Alice")
        #expect(LeadingMention.find(in: "Alice,\u{A0}hi", nicks: ["Alice"])?.nick == "Alice")
    }

    @Test(arguments: [
        "Alice hi", "Alice:hi", "Alice;: hi", " Alice: hi", "Alicex: hi", "hi Alice: there", "Alic: hi", "",
        "Alice", "Alice.: hi",
    ])
    func notAddressed(body: String) {
        #expect(LeadingMention.find(in: body, nicks: ["Alice"]) == nil)
    }

    @Test func urlIsNotAMention() {
        #expect(LeadingMention.find(in: "http://example.org", nicks: ["http"]) == nil)
    }

    @Test func longestNickWins() {
        let nicks = ["Al", "Al, Bob", "Al,"]
        #expect(LeadingMention.find(in: "Al, Bob: hi", nicks: nicks)?.nick == "Al, Bob")
        #expect(LeadingMention.find(in: "Al, hi", nicks: nicks)?.nick == "Al")
        #expect(LeadingMention.find(in: "Al Bundy: hi", nicks: ["Al", "Al Bundy"])?.nick == "Al Bundy")
    }

    @Test func exactCaseBeatsCaseInsensitive() {
        #expect(LeadingMention.find(in: "alice: hi", nicks: ["Alice", "alice"])?.nick == "alice")
        #expect(LeadingMention.find(in: "alice: hi", nicks: ["alice", "Alice"])?.nick == "alice")
        // An exact match wins even over a longer case-insensitive one.
        #expect(LeadingMention.find(in: "al, bob: hi", nicks: ["Al, Bob", "al"])?.nick == "al")
        #expect(LeadingMention.find(in: "ALICE: hi", nicks: ["Alice"])?.nick == "Alice")
        #expect(LeadingMention.find(in: "ALICE: hi", nicks: ["Alice", "alice"])?.nick == "Alice")
        #expect(LeadingMention.find(in: "ÉLODIE: salut", nicks: ["élodie"])?.nick == "élodie")
    }

    @Test func spacesEmojiAndAstralNicks() throws {
        let body = "🐱 Cat Lady 👩‍👩‍👧: meow"
        let found = try #require(LeadingMention.find(in: body, nicks: ["🐱", "🐱 Cat Lady 👩‍👩‍👧"]))
        #expect(found.nick == "🐱 Cat Lady 👩‍👩‍👧")
        #expect(found.codePointRange == 0..<16)
        #expect(body[found.range] == "🐱 Cat Lady 👩‍👩‍👧")
        #expect(LeadingMention.find(in: "𝔄𝔩𝔦𝔠𝔢, hi", nicks: ["𝔄𝔩𝔦𝔠𝔢"])?.codePointRange == 0..<5)
    }

    @Test func combiningCharactersAreCompared() throws {
        // A nick "e" does not address "é" (e + U+0301), whose first character is not "e".
        #expect(LeadingMention.find(in: "e\u{301}: hi", nicks: ["e"]) == nil)
        // Canonically equivalent spellings match; the range is the body's own (2 scalars here, 1 in the nick).
        let found = try #require(LeadingMention.find(in: "Zoe\u{301}: hi", nicks: ["Zo\u{E9}"]))
        #expect(found.nick == "Zo\u{E9}")
        #expect(found.codePointRange == 0..<4)
        // A separator with a combining mark on it is not a separator.
        #expect(LeadingMention.find(in: "Alice:\u{301} hi", nicks: ["Alice"]) == nil)
    }

    @Test func emptyNicksAndNoNicks() {
        #expect(LeadingMention.find(in: ": hi", nicks: [""]) == nil)
        #expect(LeadingMention.find(in: "Alice: hi", nicks: []) == nil)
    }

    @Test func hugeBodyAndManyNicks() {
        let body = "Nick 4999: " + String(repeating: "x", count: 1_000_000)
        let nicks = (0..<5000).map { "Nick \($0)" }
        #expect(LeadingMention.find(in: body, nicks: nicks)?.nick == "Nick 4999")
        let hugeNick = String(repeating: "n", count: 100_000)
        #expect(LeadingMention.find(in: hugeNick + ": hi", nicks: [hugeNick])?.codePointRange == 0..<100_000)
        #expect(LeadingMention.find(in: "n: hi", nicks: [hugeNick]) == nil)
    }
}
