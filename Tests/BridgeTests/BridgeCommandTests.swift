@testable import Bridge
import IsthmusCommon
import Testing

/// The `!isthmus` command parser, with literal message bodies.
@Suite struct BridgeCommandTests {
    @Test func parsesEveryCommand() {
        #expect(BridgeCommand.parse("!isthmus link lounge@conference.example.org Romeo")
                == .link(muc: JID("lounge@conference.example.org")!, ownerNick: "Romeo"))
        #expect(BridgeCommand.parse("  !isthmus   link lounge@conference.example.org  Romeo Montague ")
                == .link(muc: JID("lounge@conference.example.org")!, ownerNick: "Romeo Montague"))
        #expect(BridgeCommand.parse("!isthmus unlink") == .unlink)
        #expect(BridgeCommand.parse("!isthmus STATUS") == .status)
        #expect(BridgeCommand.parse("!isthmus help") == .help)
        #expect(BridgeCommand.parse("!isthmus") == .help)
    }

    @Test func otherMessagesAreNotCommands() {
        #expect(BridgeCommand.parse("hello") == nil)
        #expect(BridgeCommand.parse("!isthmuslink a@b c") == nil)
        #expect(BridgeCommand.parse("say !isthmus help") == nil)
        #expect(BridgeCommand.parse("") == nil)
    }

    @Test func malformedCommandsSayHowToUseThem() {
        #expect(BridgeCommand.parse("!isthmus link lounge@conference.example.org") == .usage("usage: !isthmus link MUC_JID OWNER_NICK"))
        #expect(BridgeCommand.parse("!isthmus link not-a-jid Romeo") == .usage("'not-a-jid' is not a MUC room JID (room@service)"))
        #expect(BridgeCommand.parse("!isthmus link lounge@conference.example.org/nick Romeo")
                == .usage("'lounge@conference.example.org/nick' is not a MUC room JID (room@service)"))
        #expect(BridgeCommand.parse("!isthmus unlink now") == .usage("usage: !isthmus unlink"))
        #expect(BridgeCommand.parse("!isthmus frobnicate") == .usage("unknown command 'frobnicate': try !isthmus help"))
    }
}
