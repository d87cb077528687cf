import IsthmusCommon
import TestSupport
import Testing
import XMLStream
import XMPP

/// XEP-0249 direct invitations, as the bridge's account receives them.
@Suite struct DirectInviteTests {
    func message(_ x: String) throws -> Message {
        try Message(element: TestXML.element("<message xmlns='jabber:component:accept' from='crone1@shakespeare.lit/desktop' "
            + "to='hecate@shakespeare.lit'>\(x)</message>"))
    }

    /// The XEP's example 1, password included.
    @Test func theXEPsExampleReads() throws {
        let invite = try #require(DirectInvite(try message(
            "<x xmlns='jabber:x:conference' jid='darkcave@macbeth.shakespeare.lit' password='cauldronburn' reason='Hey Hecate, this is the place for all good witches!'/>")))
        #expect(invite == DirectInvite(room: JID("darkcave@macbeth.shakespeare.lit")!, reason: "Hey Hecate, this is the place for all good witches!",
                                       password: "cauldronburn"))
        let written = XMLSerializer.string(of: invite.element, defaultNamespace: XMPPNamespace.component)
        #expect(try DirectInvite(message(written)) == invite, "what it writes reads back: \(written)")
    }

    @Test func anInvitationWithoutARoomsBareJIDIsNone() throws {
        #expect(DirectInvite(try message("<x xmlns='jabber:x:conference'/>")) == nil)
        #expect(DirectInvite(try message("<x xmlns='jabber:x:conference' jid='not a jid@@'/>")) == nil)
        #expect(DirectInvite(try message("<x xmlns='jabber:x:conference' jid='room@muc.example/nick'/>")) == nil)
        #expect(DirectInvite(try message("<x xmlns='jabber:x:conference' jid='muc.example'/>")) == nil)
        #expect(DirectInvite(try message("<x xmlns='jabber:x:other' jid='room@muc.example'/>")) == nil)
        #expect(DirectInvite(try message("<body>hi</body>")) == nil)
    }
}
