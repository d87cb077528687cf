@testable import Bridge
import IsthmusCommon
import TestSupport
import Testing
import XMPP

/// A MUC presence in the bridge's terms: the `muc#user` item's affiliation, real JID and nick change.
@Suite struct RoomPresenceTranslationTests {
    func translate(_ xml: String) throws -> RoomPresence? {
        SessionXMPPLink.roomPresence(try Presence(element: TestXML.element(xml)))
    }

    @Test func theAffiliationComesFromTheMUCUserItem() throws {
        let owner = try translate("""
            <presence from='lounge@muc.localhost/Juliet' to='isthmus@bridge.localhost/isthmus'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='owner' role='moderator' jid='juliet@localhost/phone'/></x>\
            </presence>
            """)
        #expect(owner?.affiliation == .owner)
        #expect(owner?.role == .moderator)
        #expect(owner?.realJID == JID("juliet@localhost"))
        let member = try translate("""
            <presence from='lounge@muc.localhost/Romeo' to='isthmus@bridge.localhost/isthmus'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='member' role='participant'/></x></presence>
            """)
        #expect(member?.affiliation == .member)
        #expect(member?.role == .participant)
        let bare = try translate("<presence from='lounge@muc.localhost/Nurse' to='isthmus@bridge.localhost/isthmus'/>")
        #expect(bare?.affiliation == nil)
    }

    @Test func theAvatarHashComesFromTheVCardUpdate() throws {
        let hash = String(repeating: "c", count: 40)
        let announced = try translate("""
            <presence from='lounge@muc.localhost/Juliet' to='bridge.localhost/isthmus'>\
            <x xmlns='vcard-temp:x:update'><photo>\(hash)</photo></x></presence>
            """)
        #expect(announced?.avatar == .photo(hash))
        let removed = try translate("<presence from='lounge@muc.localhost/Juliet'><x xmlns='vcard-temp:x:update'><photo/></x></presence>")
        #expect(removed?.avatar == AvatarUpdate.none)
        #expect(try translate("<presence from='lounge@muc.localhost/Juliet'/>")?.avatar == nil)
    }

    @Test func theRoomsOwnPresenceCarriesOnlyItsAvatarHash() throws {
        let hash = String(repeating: "d", count: 40)
        // ejabberd 23.01 and mod_vcard_muc: a presence from the room's bare JID announces the room's avatar (XEP-0486).
        let room = try translate("""
            <presence from='lounge@muc.localhost' to='isthmus@bridge.localhost/isthmus'>            <c xmlns='http://jabber.org/protocol/caps' hash='sha-1' node='n' ver='v'/>            <x xmlns='vcard-temp:x:update'><photo>\(hash)</photo></x></presence>
            """)
        #expect(room?.nick == "")
        #expect(room?.avatar == .photo(hash))
        #expect(room?.available == true)
        #expect(try translate("<presence from='lounge@muc.localhost'><x xmlns='vcard-temp:x:update'><photo/></x></presence>")?.avatar
                == AvatarUpdate.none)
        // Without a hash (ejabberd's caps-only presence) or unavailable: nothing for the bridge.
        #expect(try translate("<presence from='lounge@muc.localhost'><c xmlns='http://jabber.org/protocol/caps' hash='sha-1' node='n' ver='v'/></presence>") == nil)
        #expect(try translate("<presence type='unavailable' from='lounge@muc.localhost'><x xmlns='vcard-temp:x:update'><photo/></x></presence>") == nil)
    }

    func invite(_ xml: String) throws -> RoomInvite? {
        SessionXMPPLink.roomInvite(try Message(element: TestXML.element(xml)))
    }

    /// XEP-0045 §7.8.2, example 58 shape: the room forwards an invitation with the inviter in `from`.
    @Test func aMediatedInvitationIsReadFromTheRoomsForward() throws {
        let forwarded = try invite("""
            <message from='lounge@muc.localhost' to='alice\\3alocalhost@bridge.localhost' id='i1'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><invite from='romeo@localhost/phone'><reason>come in</reason></invite>\
            <password>secret</password></x></message>
            """)
        #expect(forwarded == RoomInvite(room: JID("lounge@muc.localhost")!, invitee: JID("alice\\3alocalhost@bridge.localhost")!,
                                        inviter: JID("romeo@localhost/phone"), reason: "come in"))
        // Not invitations: one from an occupant (not the room), a groupchat message, an error bounce.
        #expect(try invite("""
            <message from='lounge@muc.localhost/Romeo' to='alice@bridge.localhost'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><invite from='romeo@localhost'/></x></message>
            """) == nil)
        #expect(try invite("""
            <message type='groupchat' from='lounge@muc.localhost' to='alice@bridge.localhost'><body>topic</body></message>
            """) == nil)
        #expect(try invite("""
            <message type='error' from='lounge@muc.localhost' to='alice@bridge.localhost'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><invite to='juliet@localhost'/></x></message>
            """) == nil)
    }

    /// What the bridge sends: `<x muc#user><invite to='…'><reason/></invite></x>` (XEP-0045 §7.8.2, example 56).
    @Test func theMediatedInvitationWeSendHasTheInviteeAndReason() {
        let element = MUCInvite(to: JID("juliet@localhost")!, reason: "hello").mucUser.element
        #expect(element.name == "x" && element.namespace == XMPPNamespace.mucUser)
        let invite = Array(element.elements).first
        #expect(invite?.name == "invite")
        #expect(invite?[attribute: "to"] == "juliet@localhost")
        #expect(invite?.child("reason", namespace: XMPPNamespace.mucUser)?.text == "hello")
        #expect(MUCInvite(MUCUser(extensions: [MUCInvite(to: JID("juliet@localhost")!).element])) == MUCInvite(to: JID("juliet@localhost")!))
    }
}
