import IsthmusCommon
import Testing
@testable import Bridge

/// How the relay occupant writes a Matrix user's message (`relay.xmpp_format`), and what it calls them.
@Suite struct RelayFormatTests {
    let format = RelayFormat()

    @Test func messagesAndEmotesInTheDefaultFormats() {
        #expect(format.render(name: "Ann", text: "hello") == "<Ann> hello")
        #expect(format.render(name: "Ann", text: "/me waves") == "* Ann waves")
        #expect(format.render(name: "Ann", text: "line one\nline two") == "<Ann> line one\nline two")
    }

    @Test func placeholdersAreFilledOnceSoANameCannotInjectTheText() {
        #expect(format.render(name: "{text}", text: "hi") == "<{text}> hi")
        #expect(format.render(name: "Ann", text: "{name} {text}") == "<Ann> {name} {text}")
        let custom = RelayFormat(message: "{name}: {text} ({name})", emote: "{ {name} {text}")
        #expect(custom.render(name: "Ann", text: "x") == "Ann: x (Ann)")
        #expect(custom.render(name: "Ann", text: "/me y") == "{ Ann y")
    }

    @Test func theNameIsTheDisplaynameElseTheLocalpartNeverTheID() {
        let ann = UserID("@ann:example.org")!
        #expect(RelayFormat.name(of: ann, displaynames: [:]) == "ann")
        #expect(RelayFormat.name(of: ann, displaynames: [ann: ""]) == "ann")
        #expect(RelayFormat.name(of: ann, displaynames: [ann: "Ann Smith"]) == "Ann Smith")
        #expect(RelayFormat.name(of: ann, displaynames: [ann: " \u{7}Ann\u{0}\n "]) == "Ann", "control characters and edges go")
        #expect(RelayFormat.name(of: ann, displaynames: [ann: "\u{1}\n"]) == "ann")
    }

    @Test func namesakesAreToldApartStablyByUserID() {
        let first = UserID("@a:example.org")!, second = UserID("@b:example.org")!, third = UserID("@c:other.org")!
        let other = UserID("@d:example.org")!
        var names = [second: "Ann", first: "Ann", other: "Bob"]
        #expect(RelayFormat.name(of: first, displaynames: names) == "Ann")
        #expect(RelayFormat.name(of: second, displaynames: names) == "Ann (2)")
        #expect(RelayFormat.name(of: other, displaynames: names) == "Bob")
        names[third] = "Ann"
        #expect(RelayFormat.name(of: third, displaynames: names) == "Ann (3)")
        #expect(RelayFormat.name(of: second, displaynames: names) == "Ann (2)", "a later namesake changes nobody's name")
        names[first] = "Anne"
        #expect(RelayFormat.name(of: second, displaynames: names) == "Ann", "once the namesake is gone, the plain name")
    }
}
