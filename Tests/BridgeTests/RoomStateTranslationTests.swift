@testable import Bridge
import IsthmusCommon
import Matrix
import TestSupport
import Testing
import XMPP

/// The room-state parts of MUC stanzas in the bridge's terms: a subject, status 104, a `<destroy/>`, a room's name.
@Suite struct RoomStateTranslationTests {
    @Test func aSubjectMessageCarriesItsSubjectAndNoBody() throws {
        let message = try #require(SessionXMPPLink.roomMessage(try Message(element: TestXML.element("""
            <message type='groupchat' from='lounge@muc.localhost/Romeo' to='bridge.localhost/isthmus' id='s1'>\
            <subject>Orchard at noon</subject></message>
            """))))
        #expect(message.subject == "Orchard at noon" && message.body == nil && message.nick == "Romeo")
        let cleared = try #require(SessionXMPPLink.roomMessage(try Message(element: TestXML.element("""
            <message type='groupchat' from='lounge@muc.localhost' to='bridge.localhost/isthmus'><subject/></message>
            """))))
        #expect(cleared.subject == "" && cleared.nick == "")
    }

    @Test func aConfigurationChangeNotificationCarriesStatus104() throws {
        let message = try #require(SessionXMPPLink.roomMessage(try Message(element: TestXML.element("""
            <message type='groupchat' from='lounge@muc.localhost' to='bridge.localhost/isthmus'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><status code='104'/></x></message>
            """))))
        #expect(message.statusCodes == [.configurationChanged])
    }

    @Test func aDestroyPresenceCarriesTheReasonAndTheAlternateVenue() throws {
        let presence = try #require(SessionXMPPLink.roomPresence(try Presence(element: TestXML.element("""
            <presence type='unavailable' from='lounge@muc.localhost/Matrix' to='bridge.localhost/isthmus'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><item affiliation='none' role='none'/><status code='110'/>\
            <destroy jid='salon@muc.localhost'><reason>Moving house</reason></destroy></x></presence>
            """))))
        #expect(presence.destroyed == RoomDestruction(reason: "Moving house", alternateVenue: JID("salon@muc.localhost")))
        let bare = try #require(SessionXMPPLink.roomPresence(try Presence(element: TestXML.element("""
            <presence type='unavailable' from='lounge@muc.localhost/Matrix' to='bridge.localhost/isthmus'>\
            <x xmlns='http://jabber.org/protocol/muc#user'><destroy/></x></presence>
            """))))
        #expect(bare.destroyed == RoomDestruction())
        let left = try #require(SessionXMPPLink.roomPresence(try Presence(element: TestXML.element("""
            <presence type='unavailable' from='lounge@muc.localhost/Romeo' to='bridge.localhost/isthmus'/>
            """))))
        #expect(left.destroyed == nil)
    }

    @Test func aRoomsNameComesFromTheRoomInfoFormElseTheIdentity() throws {
        let info = try DiscoInfo(element: TestXML.element("""
            <query xmlns='http://jabber.org/protocol/disco#info'><identity category='conference' type='text' name='Identity name'/>\
            <x xmlns='jabber:x:data' type='result'><field var='FORM_TYPE' type='hidden'><value>http://jabber.org/protocol/muc#roominfo</value></field>\
            <field var='muc#roomconfig_roomname'><value>Verona</value></field></x></query>
            """))
        #expect(info.roomName == "Verona")
        let identityOnly = try DiscoInfo(element: TestXML.element("""
            <query xmlns='http://jabber.org/protocol/disco#info'><identity category='conference' type='text' name='Mantua'/></query>
            """))
        #expect(identityOnly.roomName == "Mantua")
        #expect(try DiscoInfo(element: TestXML.element("<query xmlns='http://jabber.org/protocol/disco#info'/>")).roomName == nil)
    }

    @Test func aRoomsAvatarHashComesFromTheRoomInfoFormsEitherField() throws {
        func info(_ fields: String) throws -> DiscoInfo {
            try DiscoInfo(element: TestXML.element("""
                <query xmlns='http://jabber.org/protocol/disco#info'><feature var='vcard-temp'/>\
                <x xmlns='jabber:x:data' type='result'><field var='FORM_TYPE' type='hidden'><value>http://jabber.org/protocol/muc#roominfo</value></field>\
                \(fields)</x></query>
                """))
        }
        let hash = String(repeating: "e", count: 40)
        #expect(try info("<field var='muc#roominfo_avatarhash'><value>\(hash)</value></field>").roomAvatar == .photo(hash))
        // Prosody's mod_vcard_muc (2023), upper case read as lower case.
        #expect(try info("<field var='{http://modules.prosody.im/mod_vcard_muc}avatar#sha1' type='text-single'><value>\(hash.uppercased())</value></field>")
                    .roomAvatar == .photo(hash))
        // The field without a value: no avatar. No field: the room does not say (ejabberd announces it in presence).
        #expect(try info("<field var='{http://modules.prosody.im/mod_vcard_muc}avatar#sha1' type='text-single'/>").roomAvatar == AvatarUpdate.none)
        #expect(try info("").roomAvatar == nil)
        #expect(try info("<field var='muc#roominfo_avatarhash'><value>not a hash</value></field>").roomAvatar == .notReady)
    }

    @Test func topicAndTombstoneEventsReachThePortals() throws {
        let topic = ClientEvent(type: "m.room.topic", eventID: EventID("$t")!, roomID: RoomID("!r:localhost")!, sender: UserID("@alice:localhost")!,
                                stateKey: "", originServerTS: 0, content: .roomTopic(.init(topic: "Balcony")))
        #expect(BridgeAppServiceHandler.roomEvent(topic)?.content == .topic("Balcony"))
        let tombstone = ClientEvent(type: "m.room.tombstone", eventID: EventID("$x")!, roomID: RoomID("!r:localhost")!,
                                    sender: UserID("@alice:localhost")!, stateKey: "", originServerTS: 0,
                                    content: .tombstone(.init(body: "upgraded", replacementRoom: RoomID("!new:localhost")!)))
        #expect(BridgeAppServiceHandler.roomEvent(tombstone)?.content == .tombstone(replacement: RoomID("!new:localhost")!, body: "upgraded"))
        var notState = topic
        notState.stateKey = nil
        #expect(BridgeAppServiceHandler.roomEvent(notState) == nil)
    }
}
