import Foundation
import IsthmusCommon
import TestSupport
import Testing
import XMLStream
import XMPP

/// XEP-0054 vCard photos and XEP-0153 presence updates read and written (RICH.md §8).
@Suite struct VCardPhotoTests {
    let png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]

    @Test func aPhotoIsReadWithItsTypeAndLineWrappedBase64() throws {
        let encoded = Data(png).base64EncodedString()
        let wrapped = encoded.prefix(6) + "\n  " + encoded.dropFirst(6)
        let vCard = TestXML.element("""
            <vCard xmlns='vcard-temp'><FN>Romeo</FN><PHOTO><TYPE> image/png </TYPE><BINVAL>\(wrapped)</BINVAL></PHOTO></vCard>
            """)
        #expect(try VCardPhoto.read(vCard, maxEncodedLength: 1000) == VCardPhoto(mediaType: "image/png", data: png))
    }

    @Test func noPhotoAnEmptyBinvalOrAnotherElementReadAsNone() throws {
        #expect(try VCardPhoto.read(TestXML.element("<vCard xmlns='vcard-temp'><FN>R</FN></vCard>"), maxEncodedLength: 100) == nil)
        #expect(try VCardPhoto.read(TestXML.element("<vCard xmlns='vcard-temp'><PHOTO><BINVAL/></PHOTO></vCard>"), maxEncodedLength: 100) == nil)
        #expect(try VCardPhoto.read(TestXML.element("<vCard xmlns='other'><PHOTO><BINVAL>AAAA</BINVAL></PHOTO></vCard>"), maxEncodedLength: 100) == nil)
    }

    @Test func oversizedAndInvalidBase64AreRefusedBeforeOrWhileDecoding() throws {
        let big = TestXML.element("<vCard xmlns='vcard-temp'><PHOTO><BINVAL>\(String(repeating: "A", count: 200))</BINVAL></PHOTO></vCard>")
        #expect(throws: VCardPhoto.ReadError.tooLarge(encodedLength: 200)) { try VCardPhoto.read(big, maxEncodedLength: 100) }
        let garbage = TestXML.element("<vCard xmlns='vcard-temp'><PHOTO><BINVAL>!!not base64!!</BINVAL></PHOTO></vCard>")
        #expect(throws: VCardPhoto.ReadError.invalidBase64) { try VCardPhoto.read(garbage, maxEncodedLength: 100) }
    }

    @Test func aWrittenVCardReadsBackAndAnEmptyOneHasNoPhoto() throws {
        let written = VCardPhoto.vCard(VCardPhoto(mediaType: "image/png", data: png))
        #expect(try VCardPhoto.read(written, maxEncodedLength: 1000) == VCardPhoto(mediaType: "image/png", data: png))
        #expect(VCardPhoto.vCard(nil) == XElement("vCard", namespace: XMPPNamespace.vcard))
    }

    @Test func presenceUpdatesReadHashNoneAndNotReady() throws {
        let hash = String(repeating: "0123456789", count: 4)
        func update(_ x: String) throws -> AvatarUpdate? {
            try Presence(element: TestXML.element("<presence from='r@c.localhost/romeo'>\(x)</presence>")).extensions
                .isEmpty ? nil : AvatarUpdate(extensions: Presence(element: TestXML.element("<presence from='r@c.localhost/romeo'>\(x)</presence>")).extensions)
        }
        #expect(try update("<x xmlns='vcard-temp:x:update'><photo>\(hash.uppercased())</photo></x>") == .photo(hash))
        #expect(try update("<x xmlns='vcard-temp:x:update'><photo/></x>") == AvatarUpdate.none)
        #expect(try update("<x xmlns='vcard-temp:x:update'/>") == .notReady)
        #expect(try update("<x xmlns='vcard-temp:x:update'><photo>../../etc</photo></x>") == .notReady)
        #expect(try update("") == nil)
        #expect(AvatarUpdate(extensions: [AvatarUpdate.photo(hash).element]) == .photo(hash))
        #expect(AvatarUpdate(extensions: [AvatarUpdate.none.element]) == AvatarUpdate.none)
    }
}
