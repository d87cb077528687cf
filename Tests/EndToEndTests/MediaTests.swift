import Foundation
import IsthmusCommon
import TestSupport
import XCTest
import XMLStream
import XMPP

/// Issue 13: files, images, voice and video both ways (RICH.md §6), on the real test bed.
final class MediaTests: XCTestCase {
    /// A 1×1 PNG (a real one: Synapse reads images it stores).
    static let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")!

    /// `count` bytes of a fixed pseudo-random pattern (a file that compresses badly and shows any reordering).
    static func pattern(_ count: Int, seed: UInt64 = 13) -> Data {
        var generator = SeededGenerator(seed: seed)
        var bytes = [UInt8](repeating: 0, count: count)
        for index in 0..<count { bytes[index] = UInt8(truncatingIfNeeded: generator.next()) }
        return Data(bytes)
    }

    // MARK: Matrix → XMPP

    func testAMatrixImageReachesXMPPAsALinkTheBridgeServesByteIdenticalWithRangesETagAndNoStrangers() async throws {
        let pair = try await RichPair.start("mimage")
        defer { pair.close() }
        try await pair.alice.sendFile(Self.png, msgtype: "m.image", contentType: "image/png", fileName: "tiny.png",
                                      info: ["w": 1, "h": 1], to: pair.room)
        let message = try await pair.fromPuppet("the image") { $0.body?.contains("/media/") == true }
        let url = try XCTUnwrap(message.body)
        XCTAssertTrue(url.hasSuffix("/tiny.png"), "the file name stays last in \(url)")
        XCTAssertEqual(message.extensionElement("x", namespace: "jabber:x:oob")?.child("url", namespace: "jabber:x:oob")?.text, url,
                       "OOB carries the body's URL")
        let sfs = try XCTUnwrap(message.extensionElement("file-sharing", namespace: "urn:xmpp:sfs:0"), "XEP-0447 file sharing")
        let metadata = try XCTUnwrap(sfs.child("file", namespace: "urn:xmpp:file:metadata:0"))
        XCTAssertEqual(metadata.child("media-type", namespace: "urn:xmpp:file:metadata:0")?.text, "image/png")
        XCTAssertEqual(metadata.child("size", namespace: "urn:xmpp:file:metadata:0")?.text, String(Self.png.count))
        XCTAssertEqual(metadata.child("name", namespace: "urn:xmpp:file:metadata:0")?.text, "tiny.png")
        XCTAssertEqual(sfs.child("sources", namespace: "urn:xmpp:sfs:0")?.child("url-data", namespace: "http://jabber.org/protocol/url-data")?[attribute: "target"], url)

        // An XMPP client fetches the link: the same bytes, type and a safe disposition.
        let fetched = try await TestHTTP.get(url)
        XCTAssertEqual(fetched.status, 200)
        XCTAssertEqual(fetched.body, Self.png, "the image is byte-identical")
        XCTAssertEqual(fetched.headers["content-type"], "image/png")
        XCTAssertEqual(fetched.headers["content-disposition"], "inline; filename=\"tiny.png\"")
        let etag = try XCTUnwrap(fetched.headers["etag"])
        // A range, and a revalidation.
        let part = try await TestHTTP.get(url, headers: ["Range": "bytes=1-3"])
        XCTAssertEqual(part.status, 206)
        XCTAssertEqual(part.body, Self.png.subdata(in: 1..<4))
        XCTAssertEqual(part.headers["content-range"], "bytes 1-3/\(Self.png.count)")
        let revalidated = try await TestHTTP.get(url, headers: ["If-None-Match": etag])
        XCTAssertEqual(revalidated.status, 304)

        // A wrong signature, a forged file name and unknown media: 404, nothing served.
        var parts = url.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let signature = parts[parts.count - 2]
        parts[parts.count - 2] = String(signature.reversed())
        let wrongSignature = try await TestHTTP.get(parts.joined(separator: "/"))
        XCTAssertEqual(wrongSignature.status, 404)
        XCTAssertNotEqual(wrongSignature.body, Self.png)
        parts[parts.count - 2] = signature
        parts[parts.count - 1] = "other.png"
        let renamed = try await TestHTTP.get(parts.joined(separator: "/"))
        XCTAssertEqual(renamed.status, 404, "the file name is signed too")
    }

    func testAMatrixFileWithACaptionGoesAsTheLinkThenTheCaptionAndStreamsSeveralMegabytesIntact() async throws {
        let pair = try await RichPair.start("mfile")
        defer { pair.close() }
        let data = Self.pattern(3 << 20)
        try await pair.alice.sendFile(data, msgtype: "m.file", contentType: "application/octet-stream", fileName: "data.bin",
                                      body: "the quarterly numbers", to: pair.room)
        let link = try await pair.fromPuppet("the file") { $0.body?.contains("/media/") == true }
        let url = try XCTUnwrap(link.body)
        XCTAssertTrue(url.hasSuffix("/data.bin"))
        let caption = try await pair.fromPuppet("the caption") { $0.body == "the quarterly numbers" }
        XCTAssertNil(caption.extensionElement("x", namespace: "jabber:x:oob"))
        XCTAssertEqual(link.extensionElement("file-sharing", namespace: "urn:xmpp:sfs:0")?
            .child("file", namespace: "urn:xmpp:file:metadata:0")?.child("desc", namespace: "urn:xmpp:file:metadata:0")?.text,
                       "the quarterly numbers")
        let fetched = try await TestHTTP.get(url)
        XCTAssertEqual(fetched.status, 200)
        XCTAssertEqual(fetched.body.count, data.count)
        XCTAssertEqual(fetched.body, data, "the file is byte-identical")
        XCTAssertEqual(fetched.headers["content-disposition"], "attachment; filename=\"data.bin\"")
        // Nothing doubled: only the sentinel follows.
        let late = try await pair.puppetMessages(untilSentinel: "file sentinel")
        XCTAssertEqual(late.map(\.body), ["file sentinel"])
    }
}
