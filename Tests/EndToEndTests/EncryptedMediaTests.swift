import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMLStream
import XMPP

/// Encrypted attachments (Matrix spec "Sending encrypted attachments": AES-256-CTR ciphertext on the homeserver, the key
/// in the event's `file` instead of a `url`) both ways, with a real end-to-end client (matrix-nio on vodozemac): nio's
/// encrypted image reaches XMPP as a link the bridge serves decrypted, and an XMPP occupant's file reaches nio as an
/// encrypted attachment it decrypts to the same bytes — in a linked room and in a DM.
final class EncryptedMediaTests: XCTestCase {
    /// Encryption allowed (with the ghosts' pickle key) and files on loopback fetched (the file server is there).
    static let config: @Sendable (String) -> String = {
        MediaTests.allowPrivate($0 + "\nencryption:\n  allow: true\n  pickle_key: \"\(GhostDeviceTests.pickleKey)\"\n")
    }

    func testEncryptedFilesInALinkedRoomReachXMPPDecryptedAndComeBackEncrypted() async throws {
        let report = MediaTests.pattern(300_000, seed: 21)
        let files = try MediaTests.FileServer(files: ["/upload/enc/photo.png": ("image/png", MediaTests.png)])
        let world = try EndToEndHarness("enc-media")
        try world.editConfig(Self.config)
        try await world.startBridge()
        defer { world.stopBridge() }
        let muc = world.muc("encmedia")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let juliet = try await world.xmppUser("carol")
        try await juliet.joinRoom(muc, nick: "Juliet")

        let alice = try await world.matrixUser("alice")
        let room = try await alice.createRoom(invite: [world.botUserID])
        try await alice.setState("m.room.encryption", content: EncryptedRoomTests.megolm, in: room)
        let linked = try world.cli("link", room, muc.description)
        XCTAssertEqual(linked.status, 0, "an encrypted room may be linked with encryption allowed: \(linked.stderr)")
        try await world.waitForLink(room, status: "active")
        let romeoGhost = try await eventuallyValue("Romeo's ghost in the room", timeout: 30) {
            try await alice.members(of: room).first { $0.value == "Romeo" }?.key
        }
        let julietGhost = try await eventuallyValue("Juliet's ghost in the room", timeout: 30) {
            try await alice.members(of: room).first { $0.value == "Juliet" }?.key
        }
        let nio = try await NioUser("alice", bed: world.bed, storeDirectory: world.directory.appendingPathComponent("nio-alice"))
        for ghost in [romeoGhost, julietGhost] { try await nio.waitJoined(ghost, in: room) }

        // Matrix → XMPP: nio's encrypted image; both occupants get the bridge's link, which serves the decrypted bytes.
        let sent = try await nio.sendFile(MediaTests.png, name: "tiny.png", mimetype: "image/png", to: room)
        let onServer = try await alice.timeline(of: room).first { $0.eventID == sent }
        XCTAssertEqual(onServer?.type, "m.room.encrypted", "nio encrypted the event: the homeserver holds only ciphertext")
        let link = try await romeo.nextMessage(from: muc, nick: "alice", "alice's encrypted image") { $0.body?.contains("/media/") == true }
        let url = try XCTUnwrap(link.body)
        XCTAssertTrue(url.hasSuffix("/tiny.png"), "the file name stays last in \(url)")
        XCTAssertEqual(link.extensionElement("x", namespace: "jabber:x:oob")?.child("url", namespace: "jabber:x:oob")?.text, url,
                       "OOB carries the body's URL")
        let julietsLink = try await juliet.nextMessage(from: muc, nick: "alice", "alice's encrypted image") { $0.body?.contains("/media/") == true }
        XCTAssertEqual(julietsLink.body, url, "every occupant gets the same link")
        let fetched = try await TestHTTP.get(url)
        XCTAssertEqual(fetched.status, 200)
        XCTAssertEqual(fetched.body, MediaTests.png, "the link serves the decrypted image, byte-identical")
        XCTAssertEqual(fetched.headers["content-type"], "image/png")

        // A file of many AES blocks (the counter runs across all of them), decrypted whole.
        try await nio.sendFile(report, name: "report.bin", mimetype: "application/octet-stream", to: room)
        let fileLink = try await romeo.nextMessage(from: muc, nick: "alice", "alice's encrypted file") { $0.body?.contains("/media/") == true }
        let fileURL = try XCTUnwrap(fileLink.body)
        XCTAssertTrue(fileURL.hasSuffix("/report.bin"), fileURL)
        let fetchedFile = try await TestHTTP.get(fileURL)
        XCTAssertEqual(fetchedFile.status, 200)
        XCTAssertEqual(fetchedFile.body.count, report.count)
        XCTAssertEqual(fetchedFile.body, report, "the link serves the decrypted file, byte-identical")

        // XMPP → Matrix: Romeo shares an image (Conversations' form: the URL as body, with OOB); his ghost sends it as an
        // encrypted attachment in an encrypted event, and nio decrypts both to the served bytes.
        let photoURL = files.url("/upload/enc/photo.png")
        try romeo.sendGroupchat(to: muc, body: photoURL, extensions: [MediaTests.oob(photoURL)])
        let received = try await nio.media(in: room, from: romeoGhost)
        XCTAssertEqual(received.count, 1, "\(received)")
        let image = try XCTUnwrap(received.first)
        XCTAssertEqual(image.msgtype, "m.image")
        XCTAssertEqual(image.body, "photo.png")
        XCTAssertTrue(image.decrypted, "the ghost's event went out encrypted")
        XCTAssertTrue(image.encryptedFile, "the content has `file`")
        XCTAssertFalse(image.plainURL, "the content has no `url`: the file is not stored in the clear")
        XCTAssertNil(image.error)
        XCTAssertEqual(image.data, MediaTests.png, "nio decrypts the image to the served bytes")
        XCTAssertFalse(image.ciphertextEqualsPlaintext, "the homeserver holds the image encrypted")
        let imageOnServer = try await alice.timeline(of: room).first { $0.eventID == image.eventID }
        XCTAssertEqual(imageOnServer?.type, "m.room.encrypted")
        XCTAssertGreaterThan(files.requestCount(), 0, "the bridge fetched the file")

        // Nothing doubled, each way: only the sentinel follows.
        try await nio.send("encrypted media sentinel from matrix", to: room)
        let late = try await romeo.messages(from: muc, nick: "alice", untilBody: "encrypted media sentinel from matrix")
        XCTAssertEqual(late.map(\.body), ["encrypted media sentinel from matrix"], "a file's link came twice")
        try romeo.sendGroupchat(to: muc, body: "encrypted media sentinel from xmpp", extensions: [])
        let texts = try await nio.messages(in: room, from: romeoGhost, untilBody: "encrypted media sentinel from xmpp")
        XCTAssertEqual(texts.map(\.body), ["encrypted media sentinel from xmpp"], "the image also came as text")
        let media = try await nio.media(in: room, from: romeoGhost, timeout: 0)
        XCTAssertEqual(media.map(\.eventID), [image.eventID], "the image came twice")
        romeo.close()
        juliet.close()
        await files.stop()
    }

    /// With `media.xmpp_upload`: the bridge decrypts the file (its hash checked) before it goes to the XMPP server's
    /// upload service, which then serves the cleartext.
    func testAnEncryptedImageGoesThroughTheXMPPUploadServiceDecrypted() async throws {
        let world = try EndToEndHarness("enc-upload")
        try world.editConfig { $0 + "\nencryption:\n  allow: true\n  pickle_key: \"\(GhostDeviceTests.pickleKey)\"\n"
            + "media:\n  xmpp_upload: true\n" }
        try await world.startBridge()
        defer { world.stopBridge() }
        let muc = world.muc("encupload")
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        let alice = try await world.matrixUser("alice")
        let room = try await alice.createRoom(invite: [world.botUserID])
        try await alice.setState("m.room.encryption", content: EncryptedRoomTests.megolm, in: room)
        XCTAssertEqual(try world.cli("link", room, muc.description).status, 0)
        try await world.waitForLink(room, status: "active")
        let ghost = try await eventuallyValue("Romeo's ghost in the room", timeout: 30) {
            try await alice.members(of: room).first { $0.value == "Romeo" }?.key
        }
        let nio = try await NioUser("alice", bed: world.bed, storeDirectory: world.directory.appendingPathComponent("nio-alice"))
        try await nio.waitJoined(ghost, in: room)

        let image = MediaTests.pattern(200_000, seed: 365)
        try await nio.sendFile(image, name: "shot.png", mimetype: "image/png", to: room)
        // Synapse 1.163 can skip an appservice to-device message (docs/encryption.md, "The homeserver"; seen once in CI
        // for this very send): the bridge then asks for the key, and nio answers as Element does — in time.
        let message = try await romeo.nextMessage(from: muc, nick: "alice", "alice's encrypted image") { $0.body?.hasPrefix("http") == true }
        let url = try XCTUnwrap(message.body)
        XCTAssertFalse(url.contains("/media/"), "not the bridge's media route: \(url)")
        let fetched = try await TestHTTP.get(url)
        XCTAssertEqual(fetched.status, 200)
        XCTAssertEqual(fetched.body, image, "the upload service serves the decrypted bytes")
        romeo.close()
    }

    func testEncryptedFilesInADMReachXMPPDecryptedAndComeBackEncrypted() async throws {
        let files = try MediaTests.FileServer(files: ["/upload/encdm/photo.png": ("image/png", MediaTests.png)])
        let world = try EndToEndHarness("enc-media-dm")
        try world.editConfig(Self.config)
        try await world.startBridge()
        defer { world.stopBridge() }
        let scene = try await PrivateMessageTests.Scene(world, muc: "encmediadm", account: "bob", nick: "Romeo")
        let (romeo, ghost, aliceOccupant) = (scene.occupant, scene.ghost, scene.aliceOccupant)
        let nio = try await NioUser("alice", bed: world.bed, storeDirectory: world.directory.appendingPathComponent("nio-alice"))
        let dm = try await nio.createDirectRoom(inviting: ghost)
        try await nio.waitJoined(ghost, in: dm)

        // Matrix → XMPP: nio's encrypted image is a private message with the bridge's link, which serves the decrypted bytes.
        let sent = try await nio.sendFile(MediaTests.png, name: "dm.png", mimetype: "image/png", to: dm)
        let onServer = try await scene.alice.timeline(of: dm).first { $0.eventID == sent }
        XCTAssertEqual(onServer?.type, "m.room.encrypted", "nio encrypted the event: the homeserver holds only ciphertext")
        let link = try await romeo.nextMessage(within: 30, "alice's encrypted private image") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(link.from, aliceOccupant)
        let url = try XCTUnwrap(link.body)
        XCTAssertTrue(url.contains("/media/") && url.hasSuffix("/dm.png"), url)
        XCTAssertEqual(link.extensionElement("x", namespace: "jabber:x:oob")?.child("url", namespace: "jabber:x:oob")?.text, url,
                       "OOB carries the body's URL")
        let fetched = try await TestHTTP.get(url)
        XCTAssertEqual(fetched.status, 200)
        XCTAssertEqual(fetched.body, MediaTests.png, "the link serves the decrypted image, byte-identical")
        XCTAssertEqual(fetched.headers["content-type"], "image/png")

        // XMPP → Matrix: Romeo's private image (the URL as body, with OOB) reaches the DM as an encrypted attachment.
        let photoURL = files.url("/upload/encdm/photo.png")
        var shared = PrivateMessageTests.privateMessage(to: aliceOccupant, body: photoURL)
        shared.extensions.append(MediaTests.oob(photoURL))
        try romeo.send(.message(shared))
        let received = try await nio.media(in: dm, from: ghost)
        XCTAssertEqual(received.count, 1, "\(received)")
        let image = try XCTUnwrap(received.first)
        XCTAssertEqual(image.msgtype, "m.image")
        XCTAssertEqual(image.body, "photo.png")
        XCTAssertTrue(image.decrypted, "the ghost's event went out encrypted")
        XCTAssertTrue(image.encryptedFile, "the content has `file`")
        XCTAssertFalse(image.plainURL, "the content has no `url`: the file is not stored in the clear")
        XCTAssertNil(image.error)
        XCTAssertEqual(image.data, MediaTests.png, "nio decrypts the image to the served bytes")
        XCTAssertFalse(image.ciphertextEqualsPlaintext, "the homeserver holds the image encrypted")
        let imageOnServer = try await scene.alice.timeline(of: dm).first { $0.eventID == image.eventID }
        XCTAssertEqual(imageOnServer?.type, "m.room.encrypted")

        // Nothing doubled, each way: the next private message is the sentinel.
        try await nio.send("encrypted dm sentinel from matrix", to: dm)
        let next = try await romeo.nextMessage(within: 30, "the Matrix sentinel") { $0.type == .chat && $0.body != nil }
        XCTAssertEqual(next.body, "encrypted dm sentinel from matrix", "the image's link came twice")
        try romeo.send(.message(PrivateMessageTests.privateMessage(to: aliceOccupant, body: "encrypted dm sentinel from xmpp")))
        let texts = try await nio.messages(in: dm, from: ghost, untilBody: "encrypted dm sentinel from xmpp")
        XCTAssertEqual(texts.map(\.body), ["encrypted dm sentinel from xmpp"], "the image also came as text, or a notice")
        let media = try await nio.media(in: dm, from: ghost, timeout: 0)
        XCTAssertEqual(media.map(\.eventID), [image.eventID], "the image came twice")
        romeo.close()
        await files.stop()
    }
}
