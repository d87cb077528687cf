import Foundation
import IsthmusCommon
import Matrix
import MatrixAppService
import TestSupport
import Synchronization
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
        let head = try await TestHTTP.get(url, method: "HEAD")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.headers["content-length"], String(Self.png.count))
        XCTAssertTrue(head.body.isEmpty)

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

        // A sticker is an image: its description becomes the name, with the extension clients inline by.
        let mxc = try await pair.alice.upload(Self.png, contentType: "image/png", fileName: "s.png")
        try await pair.alice.sendEvent("m.sticker", content: ["body": "Happy cat", "url": mxc, "info": ["mimetype": "image/png", "w": 1, "h": 1]],
                                       to: pair.room)
        let sticker = try await pair.fromPuppet("the sticker") { $0.body?.hasSuffix("/Happy_cat.png") == true }
        let stickerBytes = try await TestHTTP.get(try XCTUnwrap(sticker.body)).body
        XCTAssertEqual(stickerBytes, Self.png)
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

// MARK: XMPP → Matrix

extension MediaTests {
    /// A file server on loopback (where an XMPP upload service would be), counting the requests it gets.
    final class FileServer: Sendable {
        let server: FakeHomeserver
        let task: BackgroundTask

        init(files: [String: (type: String, data: Data)]) throws {
            let counter = Mutex(0)
            server = try FakeHomeserver(answer: { request in
                counter.withLock { $0 += 1 }
                guard let file = files[request.path] else { return HTTPServerResponse(status: 404) }
                return HTTPServerResponse(status: 200, headers: ["Content-Type": file.type], body: file.data)
            })
            let server = server
            task = BackgroundTask { await server.run() }
            requestCount = { counter.withLock { $0 } }
        }

        /// Requests served so far.
        let requestCount: @Sendable () -> Int

        func url(_ path: String) -> String { "http://127.0.0.1:\(server.port)\(path)" }

        func stop() async {
            server.stop()
            await task.stop()
        }
    }

    static func integer(_ value: JSONValue) -> Int? {
        if case .integer(let number) = value { return Int(number) }
        return nil
    }

    static func oob(_ url: String) -> XElement {
        XElement("x", namespace: "jabber:x:oob", children: [.element(XElement("url", namespace: "jabber:x:oob", children: [.text(url)]))])
    }

    static func sfs(_ url: String, name: String, type: String) -> XElement {
        let meta = "urn:xmpp:file:metadata:0"
        return XElement("file-sharing", namespace: "urn:xmpp:sfs:0", children: [
            .element(XElement("file", namespace: meta, children: [
                .element(XElement("media-type", namespace: meta, children: [.text(type)])),
                .element(XElement("name", namespace: meta, children: [.text(name)])),
            ])),
            .element(XElement("sources", namespace: "urn:xmpp:sfs:0", children: [
                .element(XElement("url-data", namespace: "http://jabber.org/protocol/url-data", ["target": url])),
            ])),
        ])
    }

    /// The test bed is on loopback: the positive cases need private addresses allowed.
    static let allowPrivate: @Sendable (String) -> String = { $0 + "\nmedia:\n  allow_private_addresses: true\n" }

    func testXMPPImageAndFileBecomeMatrixMediaByteIdenticalAndAWebPageStaysALink() async throws {
        let report = Self.pattern(2 << 20, seed: 7)
        let files = try FileServer(files: [
            "/upload/abc/photo.png": ("image/png", Self.png),
            "/upload/def/x": ("application/octet-stream", report),
            "/page": ("text/html; charset=utf-8", Data("<html>hi</html>".utf8)),
        ])
        let pair = try await RichPair.start("ximage", config: Self.allowPrivate)
        defer { pair.close() }

        // Conversations' form: body == URL, plus OOB.
        let photoURL = files.url("/upload/abc/photo.png")
        let image = try await pair.xmppSays(photoURL, extensions: [Self.oob(photoURL)]) { $0.msgtype == "m.image" }.event
        XCTAssertEqual(image.body, "photo.png")
        XCTAssertEqual(image.raw.at("content", "info", "mimetype")?.stringValue, "image/png")
        XCTAssertEqual(image.raw.at("content", "info", "size").flatMap(Self.integer), Self.png.count)
        XCTAssertEqual(image.raw.at("content", "info", "w").flatMap(Self.integer), 1)
        let imageMXC = try XCTUnwrap(image.raw.at("content", "url")?.stringValue)
        let downloaded = try await pair.alice.download(imageMXC)
        XCTAssertEqual(downloaded.data, Self.png, "the image is byte-identical")
        XCTAssertEqual(downloaded.contentType, "image/png")

        // XEP-0447 with a name, a type and a caption in the body.
        let reportURL = files.url("/upload/def/x")
        let file = try await pair.xmppSays("the report", extensions: [Self.sfs(reportURL, name: "report.bin", type: "application/octet-stream")]) {
            $0.msgtype == "m.file"
        }.event
        XCTAssertEqual(file.body, "the report", "the body is the caption")
        XCTAssertEqual(file.raw.at("content", "filename")?.stringValue, "report.bin")
        let fileMXC = try XCTUnwrap(file.raw.at("content", "url")?.stringValue)
        let fileData = try await pair.alice.download(fileMXC).data
        XCTAssertEqual(fileData.count, report.count)
        XCTAssertEqual(fileData, report, "the file is byte-identical")

        // A bare link to a web page is a link.
        let pageURL = files.url("/page")
        let page = try await pair.xmppSays(pageURL).event
        XCTAssertEqual(page.msgtype, "m.text")
        XCTAssertEqual(page.raw.at("content", "url"), nil)
        await files.stop()
    }

    func testLinksToLoopbackAreNotFetchedByDefault() async throws {
        let files = try FileServer(files: ["/upload/secret.png": ("image/png", Self.png)])
        let pair = try await RichPair.start("xloop")
        defer { pair.close() }
        let url = files.url("/upload/secret.png")
        let event = try await pair.xmppSays(url, extensions: [Self.oob(url)]).event
        XCTAssertEqual(event.msgtype, "m.text", "the link goes as text")
        XCTAssertEqual(event.body, url)
        // The room's messages are handled in order: once the sentinel is in Matrix, the link was handled.
        _ = try await pair.timeline(untilXMPPSentinel: "loopback sentinel")
        XCTAssertEqual(files.requestCount(), 0, "the bridge fetched a loopback URL")
        XCTAssertTrue((pair.world.bridge?.log ?? "").contains("loopback"), "the reason is logged")
        await files.stop()
    }

    func testAFileOverTheLimitBecomesALink() async throws {
        let big = Self.pattern(5000)
        let files = try FileServer(files: ["/upload/big.bin": ("application/octet-stream", big)])
        let pair = try await RichPair.start("xlimit", config: { $0 + "\nmedia:\n  allow_private_addresses: true\n  max_size: 1000\n" })
        defer { pair.close() }
        let url = files.url("/upload/big.bin")
        let event = try await pair.xmppSays(url, extensions: [Self.oob(url)]).event
        XCTAssertEqual(event.msgtype, "m.text")
        XCTAssertEqual(event.body, url)
        XCTAssertGreaterThan(files.requestCount(), 0, "it was tried")
        XCTAssertTrue((pair.world.bridge?.log ?? "").contains("too large"), "the reason is logged")
        await files.stop()
    }
}

// MARK: Restarts

extension MediaTests {
    func testFilesSentWhileTheBridgeIsDownArriveOnceEachWayAfterRestart() async throws {
        let report = Self.pattern(300_000, seed: 99)
        let files = try FileServer(files: ["/upload/r/report.pdf": ("application/pdf", report)])
        let pair = try await RichPair.start("mrestart", config: Self.allowPrivate)
        defer { pair.close() }
        _ = try await pair.aliceSays("before the restart")

        pair.world.stopBridge()
        let url = files.url("/upload/r/report.pdf")
        try pair.romeo.sendGroupchat(to: pair.muc, body: url, extensions: [Self.oob(url)])
        try await pair.alice.sendFile(Self.png, msgtype: "m.image", contentType: "image/png", fileName: "while-down.png", to: pair.room)
        try await pair.world.startBridge()

        // Matrix → XMPP: the image link, once, then the sentinel.
        let link = try await pair.fromPuppet("the image sent while down", timeout: 60) { $0.body?.hasSuffix("/while-down.png") == true }
        let fetched = try await TestHTTP.get(try XCTUnwrap(link.body))
        XCTAssertEqual(fetched.body, Self.png)
        let late = try await pair.puppetMessages(untilSentinel: "media restart sentinel")
        XCTAssertEqual(late.map(\.body), ["media restart sentinel"], "the image link came twice")

        // XMPP → Matrix: the file, once, byte-identical.
        let timeline = try await pair.timeline(untilXMPPSentinel: "xmpp media sentinel", timeout: 60)
        let media = pair.ghostMessages(in: timeline).filter { $0.msgtype == "m.file" }
        XCTAssertEqual(media.map(\.body), ["report.pdf"], "the file, once")
        let mxc = try XCTUnwrap(media.first?.raw.at("content", "url")?.stringValue)
        let downloaded = try await pair.alice.download(mxc).data
        XCTAssertEqual(downloaded, report)
        await files.stop()
    }
}

extension MediaTests {
    /// A file server whose first answer never comes (the bridge is killed while it waits); later requests are served.
    final class HangingFileServer: Sendable {
        let server: HTTPServer
        let task: BackgroundTask

        /// The requests so far, and the one held unanswered.
        final class Seen: Sendable {
            let count = Mutex(0)
            let held = Mutex<[HTTPServerRequest]>([])
        }

        init(type: String, data: Data) throws {
            let server = try HTTPServer(configuration: .init(host: "127.0.0.1", port: 0), logger: .disabled)
            self.server = server
            let seen = Seen()
            task = BackgroundTask {
                for await request in server.requests {
                    let number = seen.count.withLock { $0 += 1; return $0 }
                    if number == 1 {
                        seen.held.withLock { $0.append(request) }  // never answered: the transfer is in progress when the bridge dies
                    } else {
                        request.respond(HTTPServerResponse(status: 200, headers: ["Content-Type": type], body: data))
                    }
                }
            }
            requestCount = { seen.count.withLock { $0 } }
        }

        let requestCount: @Sendable () -> Int

        func url(_ path: String) -> String { "http://127.0.0.1:\(server.port)\(path)" }

        func stop() async {
            server.stopAccepting()
            server.close()
            await task.stop()
        }
    }

    func testAFileTransferInterruptedByACrashIsRedoneOnceAfterRestart() async throws {
        let data = Self.pattern(100_000, seed: 5)
        let files = try HangingFileServer(type: "application/zip", data: data)
        let pair = try await RichPair.start("mcrash", config: Self.allowPrivate)
        defer { pair.close() }
        let url = files.url("/upload/z/archive.zip")
        try pair.romeo.sendGroupchat(to: pair.muc, body: url, extensions: [Self.oob(url)])
        try await eventually("the bridge fetching the file", timeout: 30) { files.requestCount() >= 1 }
        pair.world.crashBridge()
        try await pair.world.startBridge()

        let timeline = try await pair.timeline(untilXMPPSentinel: "crash sentinel", timeout: 60)
        let media = pair.ghostMessages(in: timeline).filter { $0.msgtype == "m.file" }
        XCTAssertEqual(media.map(\.body), ["archive.zip"], "the file, once")
        XCTAssertEqual(pair.ghostMessages(in: timeline).filter { $0.body == url }.count, 0, "not also as a link")
        XCTAssertEqual(files.requestCount(), 2, "fetched again after the restart")
        let mxc = try XCTUnwrap(media.first?.raw.at("content", "url")?.stringValue)
        let downloaded = try await pair.alice.download(mxc).data
        XCTAssertEqual(downloaded, data)
        await files.stop()
    }
}

// MARK: Limits

extension MediaTests {
    func testAClientThatStopsReadingLosesItsTransferAndTransfersAreBounded() async throws {
        let data = Self.pattern(32 << 20, seed: 3)
        let pair = try await RichPair.start("mslow", config: { $0 + "\nmedia:\n  max_concurrent_transfers: 1\n  stall_timeout_seconds: 2\n" })
        defer { pair.close() }
        try await pair.alice.sendFile(data, msgtype: "m.file", contentType: "application/octet-stream", fileName: "big.bin", to: pair.room)
        let message = try await pair.fromPuppet("the file") { $0.body?.contains("/media/") == true }
        let link = try XCTUnwrap(message.body)
        let url = try XCTUnwrap(URL(string: link))

        // A client that asks and then reads nothing (the kernel's buffers take a few MiB, far from the 32): it holds the
        // only transfer…
        let slow = try RawSocket.connect(port: try XCTUnwrap(url.port))
        try slow.send("GET \(url.path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        // Its answer has begun before anyone else asks: a request that came first would take the transfer itself
        // (and, on a loaded machine, sometimes did, leaving the slow one a 503).
        let head = String(decoding: slow.peek(upTo: 12, timeout: .seconds(20)), as: UTF8.self)
        XCTAssertEqual(head, "HTTP/1.1 200", "the slow client's answer")
        try await eventually("a second request refused while the slow one holds the only transfer", timeout: 20) {
            try await TestHTTP.get(link).status == 503
        }
        // …until it has read nothing for the stall timeout: then its transfer ends and the next one is served whole.
        let served = try await eventuallyValue("the file served again", timeout: 30) { () -> Data? in
            let answer = try await TestHTTP.get(link)
            return answer.status == 200 ? answer.body : nil
        }
        XCTAssertEqual(served, data)
        // It reads again: what was buffered, then the end of the connection.
        let cut = await slow.receiveUntilClosed(timeout: .seconds(30))
        XCTAssertTrue(cut.closed, "the stalled client's connection was closed (\(cut.bytes.count) bytes read)")
        XCTAssertLessThan(cut.bytes.count, data.count, "the stalled client did not get the whole file")
    }
}
