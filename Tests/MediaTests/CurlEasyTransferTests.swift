import Foundation
import Media
import Synchronization
import MatrixAppService
import TestSupport
import Testing

/// The streaming transfer against a loopback server: the SSRF guard refuses loopback unless allowed, redirects
/// go to http(s) only, the head can stop a transfer, bodies arrive whole and in order, uploads send a file.
@Suite struct CurlEasyTransferTests {
    /// A server with a file, a redirect to it, a redirect to another scheme, and an echo of uploads.
    static func server(counting requests: Counter = Counter()) throws -> (FakeHomeserver, BackgroundTask) {
        let file = Self.file
        let fake = try FakeHomeserver(answer: { request in
            requests.count.withLock { $0 += 1 }
            return switch request.path {
            case "/file": HTTPServerResponse(status: 200, headers: ["Content-Type": "application/octet-stream"], body: file)
            case "/to-file": HTTPServerResponse(status: 302, headers: ["Location": "/file"])
            case "/to-ftp": HTTPServerResponse(status: 302, headers: ["Location": "ftp://127.0.0.1/file"])
            case "/echo": HTTPServerResponse(status: 200, headers: ["Content-Type": request.headers["content-type"] ?? "?"], body: request.body)
            default: HTTPServerResponse(status: 404)
            }
        })
        return (fake, BackgroundTask { await fake.run() })
    }

    final class Counter: Sendable { let count = Mutex(0) }

    static let file = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    final class Sink: @unchecked Sendable {
        var bytes: [UInt8] = []
        var head: CurlEasyTransfer.Head?
    }

    func get(_ url: String, refuse: Bool, follow: Bool = false, stopAtHead: Bool = false) async -> (Result<CurlEasyTransfer.Head, CurlEasyTransfer.Failure>, Sink) {
        var request = CurlEasyTransfer.Request(url: url)
        request.refusesSpecialAddresses = refuse
        request.followsRedirects = follow
        let sink = Sink()
        let result = await CurlEasyTransfer.performDetached(request, onHead: { head in
            sink.head = head
            return !stopAtHead
        }, onData: { chunk in
            sink.bytes.append(contentsOf: chunk)
            return true
        })
        return (result, sink)
    }

    @Test func loopbackIsRefusedUnlessAllowedAndNothingIsRead() async throws {
        let requests = Counter()
        let (fake, task) = try Self.server(counting: requests)
        defer { fake.stop() }
        let (refused, sink) = await get("http://127.0.0.1:\(fake.port)/file", refuse: true)
        #expect(refused == .failure(.refusedAddress("loopback")))
        #expect(sink.head == nil && sink.bytes.isEmpty)
        let (allowed, body) = await get("http://127.0.0.1:\(fake.port)/file", refuse: false)
        #expect((try? allowed.get().status) == 200)
        #expect(requests.count.withLock { $0 } == 1, "the refused fetch never reached the server; the allowed one did")
        #expect(Data(body.bytes) == Self.file, "whole and in order")
        // A name resolving to loopback is refused the same way (the check is on the address connected to).
        let (byName, _) = await get("http://localhost:\(fake.port)/file", refuse: true)
        if case .failure(.refusedAddress) = byName {} else { Issue.record("localhost was fetched: \(byName)") }
        await task.stop()
    }

    @Test func redirectsAreFollowedOnlyToHTTP() async throws {
        let (fake, task) = try Self.server()
        defer { fake.stop() }
        let (followed, body) = await get("http://127.0.0.1:\(fake.port)/to-file", refuse: false, follow: true)
        #expect((try? followed.get().status) == 200)
        #expect(Data(body.bytes) == Self.file)
        let (ftp, nothing) = await get("http://127.0.0.1:\(fake.port)/to-ftp", refuse: false, follow: true)
        if case .failure(.transport) = ftp {} else { Issue.record("a redirect to ftp was followed: \(ftp)") }
        #expect(nothing.bytes.isEmpty)
        await task.stop()
    }

    @Test func theHeadCanStopATransfer() async throws {
        let (fake, task) = try Self.server()
        defer { fake.stop() }
        let (stopped, sink) = await get("http://127.0.0.1:\(fake.port)/file", refuse: false, stopAtHead: true)
        #expect(stopped == .failure(.aborted))
        #expect(sink.head?.status == 200)
        #expect(sink.head?.headers["content-length"] == "300000")
        #expect(sink.bytes.isEmpty)
        await task.stop()
    }

    @Test func anUploadSendsTheWholeFile() async throws {
        let (fake, task) = try Self.server()
        defer { fake.stop() }
        let directory = try TemporaryDirectory()
        let path = directory.path("upload.bin")
        try Self.file.write(to: URL(fileURLWithPath: path))
        var request = CurlEasyTransfer.Request(url: "http://127.0.0.1:\(fake.port)/echo")
        request.upload = (path, "image/png")
        let sink = Sink()
        let result = await CurlEasyTransfer.performDetached(request, onHead: { sink.head = $0; return true }) { chunk in
            sink.bytes.append(contentsOf: chunk)
            return true
        }
        #expect((try? result.get().status) == 200)
        #expect(sink.head?.headers["content-type"] == "image/png")
        #expect(Data(sink.bytes) == Self.file)
        await task.stop()
    }
}
