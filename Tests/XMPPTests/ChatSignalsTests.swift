import IsthmusCommon
import TestSupport
import Testing
import XMLStream
import XMPP

/// XEP-0085 chat states and XEP-0333 displayed markers read from a message and written back (RICH.md §7).
@Suite struct ChatSignalsTests {
    func signals(_ children: String, body: Bool = false) throws -> ChatSignals {
        try Message(element: TestXML.element("""
            <message from='room@conference.localhost/romeo' type='groupchat' id='m1'>\(body ? "<body>b</body>" : "")\(children)</message>
            """)).signals
    }

    @Test(arguments: ChatState.allCases)
    func everyChatStateIsRead(state: ChatState) throws {
        #expect(try signals("<\(state.rawValue) xmlns='http://jabber.org/protocol/chatstates'/>") == ChatSignals(chatState: state))
        #expect(try signals("<\(state.rawValue) xmlns='http://jabber.org/protocol/chatstates'/>", body: true).chatState == state)
    }

    @Test func aDisplayedMarkerIsReadWithItsID() throws {
        #expect(try signals("<displayed xmlns='urn:xmpp:chat-markers:0' id='S1'/>") == ChatSignals(displayed: "S1"))
        #expect(try signals("<active xmlns='http://jabber.org/protocol/chatstates'/><displayed xmlns='urn:xmpp:chat-markers:0' id='S2'/>")
                == ChatSignals(chatState: .active, displayed: "S2"))
    }

    @Test func malformedOrForeignElementsAreIgnored() throws {
        #expect(try signals("<typing xmlns='http://jabber.org/protocol/chatstates'/>").isEmpty, "not a XEP-0085 state")
        #expect(try signals("<composing xmlns='urn:example'/>").isEmpty)
        #expect(try signals("<displayed xmlns='urn:xmpp:chat-markers:0'/>").isEmpty, "no id")
        #expect(try signals("<displayed xmlns='urn:xmpp:chat-markers:0' id=''/>").isEmpty)
        #expect(try signals("<displayed xmlns='urn:xmpp:chat-markers:0' id='\(String(repeating: "x", count: 1025))'/>").isEmpty)
        #expect(try signals("<received xmlns='urn:xmpp:chat-markers:0' id='S1'/><markable xmlns='urn:xmpp:chat-markers:0'/>").isEmpty,
                "only displayed markers are bridged")
        // The first of each wins.
        #expect(try signals("<paused xmlns='http://jabber.org/protocol/chatstates'/><composing xmlns='http://jabber.org/protocol/chatstates'/>")
                == ChatSignals(chatState: .paused))
    }

    @Test func signalsAreWrittenAsTheyAreRead() throws {
        let written = ChatSignals(chatState: .composing, displayed: "S'1")
        let wire = written.elements.map { XMLSerializer.string(of: $0, defaultNamespace: "jabber:component:accept") }
        #expect(wire == ["<composing xmlns='http://jabber.org/protocol/chatstates'/>",
                         "<displayed xmlns='urn:xmpp:chat-markers:0' id='S&apos;1'/>"])
        #expect(ChatSignals(extensions: written.elements) == written)
    }
}
