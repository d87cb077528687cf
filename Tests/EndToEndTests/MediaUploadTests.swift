import Foundation
import TestSupport
import XCTest
import XMLStream
import XMPP

/// Issue 13, `media.xmpp_upload`: Matrix files re-uploaded to the XMPP server's XEP-0363 service (Prosody's
/// mod_http_file_share on upload.localhost, ejabberd's mod_http_upload; both limited to 10 MiB in the test bed).
final class MediaUploadTests: XCTestCase {
    static func upload(_ config: String) -> String { config + "\nmedia:\n  xmpp_upload: true\n" }
    /// The services' limit in the test bed (scripts/testbed).
    static let serviceLimit = 10 << 20

    func testAMatrixImageGoesThroughTheXMPPUploadServiceByteIdenticalAndAFileOverItsLimitFallsBackToTheBridgesLink() async throws {
        let pair = try await RichPair.start("mupload", config: Self.upload)
        defer { pair.close() }
        let image = MediaTests.pattern(200_000, seed: 363)
        try await pair.alice.sendFile(image, msgtype: "m.image", contentType: "image/png", fileName: "shot.png",
                                      info: ["w": 1, "h": 1], to: pair.room)
        let message = try await pair.fromPuppet("the uploaded image") { $0.body?.hasPrefix("http") == true }
        let url = try XCTUnwrap(message.body)
        XCTAssertFalse(url.contains("/media/"), "not the bridge's media route: \(url)")
        XCTAssertTrue(url.contains("/file_share/") || url.contains("/upload/"), "a URL of the upload service: \(url)")
        XCTAssertEqual(message.extensionElement("x", namespace: "jabber:x:oob")?.child("url", namespace: "jabber:x:oob")?.text, url,
                       "OOB carries the upload's URL")
        let fetched = try await TestHTTP.get(url)
        XCTAssertEqual(fetched.status, 200)
        XCTAssertEqual(fetched.body, image, "the upload service serves the identical bytes")

        // One byte over the services' limit: the bridge's own link, which serves the file.
        let large = MediaTests.pattern(Self.serviceLimit + 1, seed: 364)
        try await pair.alice.sendFile(large, msgtype: "m.file", contentType: "application/octet-stream", fileName: "big.bin", to: pair.room)
        let fallback = try await pair.fromPuppet("the over-limit file") { $0.body?.hasSuffix("/big.bin") == true }
        let link = try XCTUnwrap(fallback.body)
        XCTAssertTrue(link.contains("/media/"), "the bridge's link: \(link)")
        let served = try await TestHTTP.get(link)
        XCTAssertEqual(served.status, 200)
        XCTAssertEqual(served.body, large)

        // The same without a declared size: the download for the upload stops at the limit, and the link goes.
        let mxc = try await pair.alice.upload(large, contentType: "application/octet-stream", fileName: "big2.bin")
        try await pair.alice.sendEvent("m.room.message", content: ["msgtype": "m.file", "body": "big2.bin", "url": mxc], to: pair.room)
        let undeclared = try await pair.fromPuppet("the over-limit file without a size") { $0.body?.hasSuffix("/big2.bin") == true }
        XCTAssertTrue(try XCTUnwrap(undeclared.body).contains("/media/"), "the bridge's link")
        // Nothing doubled: only the sentinel follows.
        let late = try await pair.puppetMessages(untilSentinel: "upload sentinel")
        XCTAssertEqual(late.map(\.body), ["upload sentinel"])
        // Found once; both fallbacks have the same kind of reason: logged once (a line a minute per kind).
        let log = pair.world.bridge?.log ?? ""
        XCTAssertEqual(log.components(separatedBy: "XMPP upload service found").count - 1, 1, "the service is looked for once")
        XCTAssertEqual(log.components(separatedBy: "larger than the upload service takes").count - 1, 1, "the reason is logged once")
    }
}
