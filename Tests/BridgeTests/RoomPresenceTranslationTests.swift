@testable import Bridge
import IsthmusCommon
import TestSupport
import Testing
import XMPP

/// A MUC presence in the bridge's terms: the `muc#user` item's affiliation, real JID and nick change.
@Suite struct RoomPresenceTranslationTests {
    func translate(_ xml: String) throws -> RoomPresence? {
        ComponentXMPPLink.roomPresence(try Presence(element: TestXML.element(xml)))
    }

    @Test func theAffiliationComesFromTheMUCUserItem() throws {
        let owner = try translate("""
            <presence from='lounge@muc.localhost/Juliet' to='bridge.localhost/isthmus'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='owner' role='moderator' jid='juliet@localhost/phone'/></x>\
            </presence>
            """)
        #expect(owner?.affiliation == .owner)
        #expect(owner?.realJID == JID("juliet@localhost"))
        let member = try translate("""
            <presence from='lounge@muc.localhost/Romeo' to='bridge.localhost/isthmus'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='member' role='participant'/></x></presence>
            """)
        #expect(member?.affiliation == .member)
        let bare = try translate("<presence from='lounge@muc.localhost/Nurse' to='bridge.localhost/isthmus'/>")
        #expect(bare?.affiliation == nil)
    }
}
