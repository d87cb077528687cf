import IsthmusCommon
import Testing
@testable import Bridge

/// How the bridge's Matrix account writes an XMPP occupant's message (Matrix client mode): an MSC4144 profile naming
/// the occupant, and `relay.matrix_format` / `<strong data-mx-profile-fallback>` for clients without profiles.
@Suite struct MatrixRelayFormatTests {
    let format = MatrixRelayFormat()

    @Test func aMessageNamesTheOccupantInTheProfileAndInTheFallback() {
        let relayed = format.relaying(OutgoingMatrixMessage(kind: .text, body: "hello <world>\nagain"), nick: "Romeo", id: "@_xmpp_romeo:example.org")
        #expect(relayed.body == "Romeo: hello <world>\nagain")
        #expect(relayed.html == "<strong data-mx-profile-fallback>Romeo: </strong>hello &lt;world&gt;<br>again")
        #expect(relayed.profile == PerMessageProfile(id: "@_xmpp_romeo:example.org", displayname: "Romeo", hasFallback: true))
        #expect(relayed.kind == .text)
    }

    @Test func htmlIsKeptBehindTheFallbackAndANickCannotInjectMarkup() {
        let styled = OutgoingMatrixMessage(kind: .text, body: "bold", html: "<b>bold</b>")
        let relayed = format.relaying(styled, nick: "<i>R&J</i>", id: "x")
        #expect(relayed.html == "<strong data-mx-profile-fallback>&lt;i&gt;R&amp;J&lt;/i&gt;: </strong><b>bold</b>")
        #expect(relayed.body == "<i>R&J</i>: bold", "the plain body is plain text")
    }

    @Test func anEmoteKeepsItsBodyAfterTheNick() {
        let relayed = format.relaying(OutgoingMatrixMessage(kind: .emote, body: "waves"), nick: "Romeo", id: "x")
        #expect(relayed.kind == .emote)
        #expect(relayed.body == "Romeo waves")
        #expect(relayed.html == "<strong data-mx-profile-fallback>Romeo </strong>waves")
    }

    @Test func anEditRelaysItsNewContentAndKeepsTheProfile() {
        let edit = OutgoingMatrixMessage(kind: .text, body: "fixed").replacing(EventID("$original")!)
        let relayed = format.relaying(edit, nick: "Romeo", id: "x")
        #expect(relayed.replacement?.body == "Romeo: fixed")
        #expect(relayed.body == "* Romeo: fixed")
        #expect(relayed.relatesTo == .replacing(EventID("$original")!))
        #expect(relayed.profile?.displayname == "Romeo")
    }

    @Test func theOperatorsFormatIsFilledOnce() {
        let custom = MatrixRelayFormat(format: "[{nick}] {text} ({nick})")
        #expect(custom.relaying(OutgoingMatrixMessage(kind: .notice, body: "{nick}"), nick: "R", id: "x").body == "[R] {nick} (R)")
    }
}
