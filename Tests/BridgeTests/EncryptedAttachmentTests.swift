@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusFakes
@testable import MatrixAppService
import Matrix
import MatrixCrypto
import Media
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Encrypted attachments (spec §11.12.4.5) through the bridge: `file` read from a Matrix message and written into one,
/// the link that carries an encrypted file's secrets, and the media route decrypting as it streams.
@Suite struct EncryptedAttachmentTests {
    static let plaintext = Array((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

    static func sealed() -> (ciphertext: [UInt8], keys: AttachmentKeys) {
        let cipher = AttachmentCipher.encrypting()
        let ciphertext = cipher.update(plaintext)
        return (ciphertext, cipher.finishEncrypting())
    }

    static func event(_ content: String) throws -> ClientEvent {
        let json = #"{"type": "m.room.message", "event_id": "$ev", "room_id": "!room:localhost", "sender": "@alice:localhost", "#
            + #""origin_server_ts": 1, "content": \#(content)}"#
        return try JSONDecoder().decode(ClientEvent.self, from: Data(json.utf8))
    }

    @Test func aFileGoesOnTheWireAsTheSpecWritesItAndComesBack() throws {
        let keys = Self.sealed().keys
        let file = keys.file(at: "mxc://localhost/cipher")
        let json = try #require(String(data: try JSONEncoder().encode(file), encoding: .utf8))
        for part in [#""v":"v2""#, #""alg":"A256CTR""#, #""kty":"oct""#, #""ext":true"#, #""url":"mxc:\/\/localhost\/cipher""#] {
            #expect(json.contains(part), "\(json)")
        }
        let k = try #require(file.key?.key), iv = try #require(file.iv)
        #expect(!k.contains("=") && !k.contains("+") && !k.contains("/"), "k is unpadded base64url")
        #expect(!iv.contains("=") && file.hashes?["sha256"]?.contains("=") == false, "iv and hashes are unpadded base64")
        let decoded = try JSONDecoder().decode(EncryptedFile.self, from: Data(json.utf8))
        #expect(AttachmentKeys(decoded) == keys)
    }

    @Test func whatCannotBeOpenedIsRefused() throws {
        let good = Self.sealed().keys.file(at: "mxc://localhost/cipher")
        var v1 = good
        v1.version = "v1"
        var otherAlgorithm = good
        otherAlgorithm.key?.algorithm = "A128CTR"
        var shortIV = good
        shortIV.iv = UnpaddedBase64.encode(Array(0..<8))
        var noHash = good
        noHash.hashes = [:]
        var notBase64 = good
        notBase64.key?.key = "not base64!"
        for file in [v1, otherAlgorithm, shortIV, noHash, notBase64] {
            #expect(AttachmentKeys(file) == nil, "\(file)")
        }
        // A key written in the standard alphabet (some clients do) is read as well.
        var standard = good
        standard.key?.key = UnpaddedBase64.encode(Self.sealed().keys.key)
        #expect(AttachmentKeys(standard) != nil)
    }

    @Test func anEncryptedImageFromMatrixIsAnAttachmentWithItsSecretsAndABrokenOneIsItsText() throws {
        let keys = Self.sealed().keys
        let file = String(decoding: try JSONEncoder().encode(keys.file(at: "mxc://localhost/cipher")), as: UTF8.self)
        let image = try Self.event(#"{"msgtype": "m.image", "body": "cat.png", "info": {"mimetype": "image/png"}, "file": \#(file)}"#)
        guard case .message(let msgtype, let body, let details)? = BridgeAppServiceHandler.roomEvent(image)?.content else {
            Issue.record("not a message"); return
        }
        #expect(msgtype == .image && body == "cat.png")
        #expect(details?.media == MatrixAttachment(mxc: "mxc://localhost/cipher", fileName: nil, info: MediaInfo(mimeType: "image/png"), keys: keys))
        let broken = try Self.event(#"{"msgtype": "m.image", "body": "cat.png", "file": {"url": "mxc://localhost/x", "v": "v2", "iv": "", "#
            + #""hashes": {}, "key": {"kty": "oct", "alg": "A256CTR", "k": "", "key_ops": [], "ext": true}}}"#)
        guard case .message(_, let text, let none)? = BridgeAppServiceHandler.roomEvent(broken)?.content else { Issue.record("dropped"); return }
        #expect(text == "cat.png" && none?.media == nil, "goes as its text rather than as a file nobody can open")
        let keyless = try Self.event(#"{"msgtype": "m.image", "body": "dog.png", "file": {"url": "mxc://localhost/x"}}"#)
        guard case .message(_, let body, let nothing)? = BridgeAppServiceHandler.roomEvent(keyless)?.content else {
            Issue.record("a file without its key made the whole message unreadable"); return
        }
        #expect(body == "dog.png" && nothing?.media == nil)
    }

    @Test func anEncryptedStickerIsAnImageWithItsSecrets() throws {
        let keys = Self.sealed().keys
        let file = String(decoding: try JSONEncoder().encode(keys.file(at: "mxc://localhost/sticker")), as: UTF8.self)
        let json = #"{"type": "m.sticker", "event_id": "$ev", "room_id": "!room:localhost", "sender": "@alice:localhost", "#
            + #""origin_server_ts": 1, "content": {"body": "Happy cat", "info": {"mimetype": "image/png"}, "file": \#(file)}}"#
        let sticker = try JSONDecoder().decode(ClientEvent.self, from: Data(json.utf8))
        guard case .message(let msgtype, _, let details)? = BridgeAppServiceHandler.roomEvent(sticker)?.content else { Issue.record("dropped"); return }
        #expect(msgtype == .image && details?.media?.keys == keys && details?.media?.mxc == "mxc://localhost/sticker")
    }

    /// A temporary file holding `bytes` (unlinked: reached by its descriptor).
    static func file(_ bytes: [UInt8]) throws -> Int32 {
        let descriptor = try #require(MediaImporter.unlinkedTemporaryFile(prefix: "isthmus-test"))
        #expect(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count)
        return descriptor
    }

    static func contents(_ descriptor: Int32) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 1 << 20)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        return Array(bytes.prefix(max(0, count)))
    }

    @Test func aFileOnDiskIsEncryptedForUploadAndADownloadedOneDecryptedOnlyWhenItsHashMatches() async throws {
        let plain = try Self.file(Self.plaintext)
        defer { close(plain) }
        let sealed = try #require(await AttachmentFiles.encrypted(plain))
        defer { close(sealed.descriptor) }
        let ciphertext = Self.contents(sealed.descriptor)
        #expect(sealed.size == Int64(Self.plaintext.count) && ciphertext.count == Self.plaintext.count && ciphertext != Self.plaintext)
        let opened = try #require(await AttachmentFiles.decrypted(sealed.descriptor, keys: sealed.keys))
        defer { close(opened.descriptor) }
        #expect(Self.contents(opened.descriptor) == Self.plaintext)
        var tampered = ciphertext
        tampered[0] ^= 1
        let altered = try Self.file(tampered)
        defer { close(altered) }
        #expect(await AttachmentFiles.decrypted(altered, keys: sealed.keys) == nil, "a file the homeserver altered is not passed on")
    }

    @Test func anEncryptedFilesLinkCarriesItsSecretsUnderTheSignature() throws {
        let keys = Self.sealed().keys
        let signer = MediaLinkSigner(publicBase: "https://bridge.example/media", secret: "s")
        let attachment = MatrixAttachment(mxc: "mxc://localhost/cipher", fileName: "cat.png", info: nil, keys: keys)
        let url = attachment.link(signer, name: "cat.png")
        let parts = url.dropFirst("https://bridge.example/media/".count).split(separator: "/").map(String.init)
        let link = try #require(signer.verifiedLink(id: parts[0], signature: parts[1], fileName: parts[2]))
        #expect(link.reference == "mxc://localhost/cipher")
        #expect(link.secret.flatMap(AttachmentKeys.init(linkSecret:)) == keys)
        #expect(signer.verify(id: parts[0], signature: parts[1], fileName: parts[2]) == nil, "the plain check refuses an encrypted link")
        // Another secret under the same signature is refused: nobody makes the bridge decrypt with a key of theirs.
        let other = MatrixAttachment(mxc: "mxc://localhost/cipher", fileName: "cat.png", info: nil, keys: Self.sealed().keys)
        let forged = other.link(signer, name: "cat.png").dropFirst("https://bridge.example/media/".count).split(separator: "/").map(String.init)
        #expect(signer.verifiedLink(id: forged[0], signature: parts[1], fileName: parts[2]) == nil)
        // The plain link of the same file is another link.
        #expect(!MatrixAttachment(mxc: "mxc://localhost/cipher", fileName: "cat.png", info: nil).link(signer, name: "cat.png").contains(parts[1]))
    }

    /// What the media route answers for an encrypted file whose ciphertext the (fake) homeserver serves, asked with
    /// `range`: the status, the headers and the body as the client reads it.
    static func served(_ ciphertext: [UInt8], keys: AttachmentKeys, range: String? = nil) async throws
        -> (status: Int, headers: [String: String], body: [UInt8]) {
        let homeserver = try FakeHomeserver(answer: { request in
            request.path.hasSuffix("/media/download/localhost/cipher")
                ? HTTPServerResponse(status: 200, headers: ["Content-Type": "application/octet-stream"], body: Data(ciphertext))
                : HTTPServerResponse(status: 404)
        })
        let running = BackgroundTask { await homeserver.run() }
        defer { homeserver.stop() }
        let signer = MediaLinkSigner(publicBase: "https://bridge.example/media", secret: "s")
        let proxy = MediaProxy(settings: MediaSettings(homeserverURL: homeserver.url, asToken: "t", signer: signer, maxSize: 1 << 20),
                               logger: .disabled)
        let url = MatrixAttachment(mxc: "mxc://localhost/cipher", fileName: "cat.png", info: nil, keys: keys).link(signer, name: "cat.png")
        let parts = url.dropFirst("https://bridge.example/media/".count).split(separator: "/").map(String.init)
        let response = await proxy.serveMedia(id: parts[0], signature: parts[1], fileName: parts[2], method: "GET",
                                              headers: range.map { ["range": $0] } ?? [:])
        var body = Array(response.body)
        if let stream = response.stream {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            reading: while true {
                switch buffer.withUnsafeMutableBytes({ stream.read(into: $0, resume: {}) }) {
                case .bytes(let count): body += buffer.prefix(count)
                case .wait: try await Task.sleep(for: .milliseconds(5))
                case .end: break reading
                case .failed: throw BodyFailed()
                }
            }
        }
        await running.stop()
        return (response.status, response.headers, body)
    }

    struct BodyFailed: Error {}

    @Test func theMediaRouteServesAnEncryptedFileDecryptedOnlyOnceItsHashMatches() async throws {
        let (ciphertext, keys) = Self.sealed()
        let whole = try await Self.served(ciphertext, keys: keys)
        #expect(whole.status == 200 && whole.body == Self.plaintext)
        #expect(whole.headers["Content-Type"] == "image/png", "typed by its name, not the homeserver's octet-stream")
        let part = try await Self.served(ciphertext, keys: keys, range: "bytes=100-199")
        #expect(part.status == 206 && part.body == Array(Self.plaintext[100...199]))
        #expect(part.headers["Content-Range"] == "bytes 100-199/\(Self.plaintext.count)")
        var tampered = ciphertext
        tampered[12_345] ^= 0x40
        let altered = try await Self.served(tampered, keys: keys)
        #expect(altered.status == 502, "a file the homeserver altered: nothing of it is served")
        #expect(String(decoding: altered.body, as: UTF8.self) == "Bad gateway\n")
    }

    @Test func anEncryptedUploadIsSentAsFileNotURL() throws {
        var message = OutgoingMatrixMessage(kind: .text, body: "cat.png")
        let keys = Self.sealed().keys
        message.media = OutgoingMedia(msgtype: .image, mxc: "mxc://localhost/cipher", fileName: "cat.png",
                                      info: MediaInfo(mimeType: "image/png", size: 70_000), keys: keys)
        let content = AppServiceMatrixLink.content(message)
        #expect(content.url == nil)
        #expect(content.file.flatMap(AttachmentKeys.init) == keys)
        #expect(content.file?.url == "mxc://localhost/cipher")
        #expect(content.info == MediaInfo(mimeType: "image/png", size: 70_000), "info describes the cleartext")
    }
}
