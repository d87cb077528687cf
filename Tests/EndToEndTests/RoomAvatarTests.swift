import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMLStream
import XMPP

/// Issue 13 item 3, the room's part: the MUC's avatar (XEP-0486: its vCard, the hash in disco#info or in the room's
/// presence, a status 104) becomes the Matrix room's `m.room.avatar`, on the real test bed (Prosody's mod_vcard_muc,
/// ejabberd's native room vCards).
final class RoomAvatarTests: XCTestCase {
    /// The Matrix room's `m.room.avatar` `url` once it satisfies `matches`.
    func roomAvatar(_ pair: RichPair, _ what: String, where matches: @escaping (String?) -> Bool) async throws -> String? {
        try await eventuallyValue(what, timeout: 30, pollEvery: .milliseconds(200)) { () -> String?? in
            let url = try await pair.alice.state("m.room.avatar", in: pair.room)?["url"] as? String
            return matches(url) ? .some(url) : nil
        } ?? nil
    }

    /// Romeo, the MUC's owner, sets the room's vCard (XEP-0486 §4: an IQ set to the room's bare JID).
    func setRoomVCard(_ pair: RichPair, _ vCard: XElement) async throws {
        let stored = try await pair.romeo.request(IQ(type: .set, to: pair.muc, payload: .other(vCard)), within: 30)
        XCTAssertEqual(stored.type, .result, "the room stores its vCard: \(stored.element)")
    }

    func testTheMUCsAvatarBecomesTheMatrixRoomsAvatarAndItsRemovalClearsIt() async throws {
        let pair = try await RichPair.start("roomavatar")
        defer { pair.close() }
        // m.room.avatar needs power level 50 in the room alice created (state_default): she grants it, as an admin would.
        try await pair.grantBotModeratorPower()
        try await setRoomVCard(pair, VCardPhoto.vCard(VCardPhoto(mediaType: "image/png", data: Array(AvatarTests.png))))
        let found = try await roomAvatar(pair, "the Matrix room's avatar") { $0?.hasPrefix("mxc://") == true }
        let mxc = try XCTUnwrap(found)
        let downloaded = try await pair.alice.download(mxc)
        XCTAssertEqual(downloaded.data, AvatarTests.png, "the room's avatar is byte-identical to the MUC vCard's photo")
        let event = try await pair.alice.timeline(of: pair.room).last { $0.type == "m.room.avatar" }
        XCTAssertEqual(event?.sender, pair.world.botUserID, "set by the bridge's bot")

        // The MUC's avatar removed (a vCard without a photo): the avatar the bridge set is cleared.
        try await setRoomVCard(pair, XElement("vCard", namespace: XMPPNamespace.vcard))
        let cleared = try await roomAvatar(pair, "the Matrix room without an avatar") { $0 == nil }
        XCTAssertNil(cleared)
        let content = try await pair.alice.state("m.room.avatar", in: pair.room)
        XCTAssertNotNil(content, "cleared with {}, not left as it was")
    }

    func testARefusalIsLoggedThenAnAvatarSetWhileTheBridgeWasDownIsAppliedAtActivationAndNotAgainAfterARestart() async throws {
        let pair = try await RichPair.start("roomavatar2")
        defer { pair.close() }
        let log = { pair.world.bridge?.log.components(separatedBy: "\n").filter { $0.contains("refused the bridge's change of its avatar") } ?? [] }
        // The bot has no power to set m.room.avatar yet: the room refuses, the bridge says so.
        try await setRoomVCard(pair, VCardPhoto.vCard(VCardPhoto(mediaType: "image/png", data: Array(AvatarTests.png))))
        try await eventually("the refusal in the bridge's log", timeout: 30, pollEvery: .milliseconds(200)) { !log().isEmpty }
        XCTAssertEqual(log().count, 1)

        // The power granted while the bridge is down: the next activation applies the MUC's avatar.
        pair.world.stopBridge()
        try await pair.grantBotModeratorPower()
        try await pair.world.startBridge()
        let found = try await roomAvatar(pair, "the Matrix room's avatar after the restart") { $0?.hasPrefix("mxc://") == true }
        let mxc = try XCTUnwrap(found)
        let downloaded = try await pair.alice.download(mxc)
        XCTAssertEqual(downloaded.data, AvatarTests.png)

        // Another restart: the avatar applied is recorded, so nothing is set again (the sentinel is bridged after the
        // bridge read the room's disco#info and its presence).
        pair.world.stopBridge()
        try await pair.world.startBridge()
        let timeline = try await pair.timeline(untilXMPPSentinel: "after the second restart")
        let avatars = timeline.filter { $0.type == "m.room.avatar" }
        XCTAssertEqual(avatars.count, 1, "one m.room.avatar event: \(avatars.map(\.content))")
    }
}
