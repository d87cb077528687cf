@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Testing
import XMPPComponent

/// Avatar images checked before they cross (RICH.md §8): images only, size-limited, the announced hash; and the
/// component's answers to IQ requests (vCards of puppets, pings, errors for anything else).
@Suite struct AvatarImageTests {
    let png: [UInt8] = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] + Array(repeating: 7, count: 40)

    @Test func anImageWithTheAnnouncedHashPassesAndIsTypedByItsBytes() {
        let hash = AvatarImage.sha1(png)
        #expect(hash.count == 40)
        #expect(AvatarImage.check(png, announced: hash, limit: 100) == .success(StoredAvatar(sha1: hash, mediaType: "image/png", data: png)))
        #expect(AvatarImage.mediaType(of: [0xff, 0xd8, 0xff, 0xe0]) == "image/jpeg")
        #expect(AvatarImage.mediaType(of: Array("GIF89a..".utf8)) == "image/gif")
        #expect(AvatarImage.mediaType(of: Array("RIFF\0\0\0\0WEBPVP8 ".utf8)) == "image/webp")
    }

    @Test func wrongHashNotAnImageAndOversizedAreRefused() {
        #expect(AvatarImage.check(png, announced: String(repeating: "0", count: 40), limit: 100)
                == .failure(.hashMismatch(announced: String(repeating: "0", count: 40), actual: AvatarImage.sha1(png))))
        #expect(AvatarImage.check(Array("<html>".utf8), announced: nil, limit: 100) == .failure(.notAnImage))
        #expect(AvatarImage.check(png, announced: nil, limit: 10) == .failure(.tooLarge(png.count, limit: 10)))
    }

    @Test func aVCardIsDecodedCheckedOrRefusedWithoutDecodingWhatCannotFit() {
        let hash = AvatarImage.sha1(png)
        let vCard = VCardPhoto.vCard(VCardPhoto(mediaType: "image/png", data: png))
        #expect(AvatarImage.fromVCard(vCard, announced: hash, limit: 100) == .success(StoredAvatar(sha1: hash, mediaType: "image/png", data: png)))
        guard case .failure(.tooLarge)? = AvatarImage.fromVCard(vCard, announced: hash, limit: 16) else {
            Issue.record("an oversized vCard photo was not refused")
            return
        }
        let bad = XElement("vCard", namespace: XMPPNamespace.vcard, children: [.element(XElement("PHOTO", namespace: XMPPNamespace.vcard, children: [
            .element(XElement("BINVAL", namespace: XMPPNamespace.vcard, children: [.text("%%%%")]))]))])
        #expect(AvatarImage.fromVCard(bad, announced: hash, limit: 100) == .failure(.invalidEncoding))
        #expect(AvatarImage.fromVCard(VCardPhoto.vCard(nil), announced: hash, limit: 100) == nil)
    }

    @Test func theComponentAnswersVCardsPingsAndRefusesTheRest() {
        let avatars = PuppetAvatars()
        let responder = ComponentIQResponder(
            connection: ComponentConnection(configuration: ComponentConfiguration(host: "localhost", port: 1, componentDomain: "bridge.localhost",
                                                                                  secret: "s"), logger: Logger(label: "test")),
            avatars: avatars)
        let puppet = JID("alice\\40localhost@bridge.localhost/isthmus")!
        let room = JID("lounge@conference.localhost")!
        let image = StoredAvatar(sha1: AvatarImage.sha1(png), mediaType: "image/png", data: png)
        avatars.set(image, puppet: puppet, room: room)
        let asker = room.with(resource: "romeo")!
        let get = IQ(type: .get, from: asker, to: puppet.bare, payload: .other(VCardPhoto.request))
        #expect(responder.response(to: get) == get.result(payload: .other(VCardPhoto.vCard(VCardPhoto(mediaType: "image/png", data: png)))))
        #expect(avatars.presenceUpdate(puppet: puppet, room: room) == AvatarUpdate.photo(image.sha1).element)
        // No avatar: an empty vCard and an empty <photo/>.
        avatars.set(nil, puppet: puppet, room: room)
        #expect(responder.response(to: get) == get.result(payload: .other(VCardPhoto.vCard(nil))))
        #expect(avatars.presenceUpdate(puppet: puppet, room: room) == AvatarUpdate.none.element)
        let ping = IQ(type: .get, from: asker, to: puppet, payload: .ping)
        #expect(responder.response(to: ping) == ping.result())
        let unknown = IQ(type: .get, from: asker, to: puppet, payload: .other(XElement("query", namespace: "jabber:iq:version")))
        #expect(responder.response(to: unknown) == unknown.errorResponse(StanzaError(type: .cancel, condition: .serviceUnavailable)))
        #expect(responder.response(to: get.result()) == nil)
        // Client mode's roster pushes: from the account itself (or with no from) acknowledged, from anyone else refused.
        let account = JID("relay@localhost/isthmus")!
        let query = XElement("query", namespace: XMPPNamespace.roster)
        let push = IQ(type: .set, from: account.bare, to: account, payload: .other(query))
        #expect(responder.response(to: push) == push.result())
        let anonymousPush = IQ(type: .set, to: account, payload: .other(query))
        #expect(responder.response(to: anonymousPush) == anonymousPush.result())
        let spoofed = IQ(type: .set, from: JID("mallory@evil.example")!, to: account, payload: .other(query))
        #expect(responder.response(to: spoofed) == spoofed.errorResponse(StanzaError(type: .cancel, condition: .serviceUnavailable)))
    }
}
