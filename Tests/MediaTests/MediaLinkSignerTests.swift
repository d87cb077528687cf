import IsthmusCommon
import Media
import Testing

@Suite struct MediaLinkSignerTests {
    let signer = MediaLinkSigner(publicBase: "https://bridge.example/media/", secret: "s3cret")
    let reference = MXCURI(mxc: "mxc://matrix.example:8448/AbC_12-x")!

    /// The segments after the base of a URL the signer made.
    func segments(_ url: String) -> [String] {
        url.dropFirst("https://bridge.example/media/".count).split(separator: "/").map(String.init)
    }

    @Test func aLinkItMadeVerifiesToTheSameReferenceAndName() throws {
        let url = signer.url(for: reference, fileName: "holiday photo.jpg")
        #expect(url.hasPrefix("https://bridge.example/media/"))
        #expect(url.hasSuffix("/holiday_photo.jpg"))
        let parts = segments(url)
        #expect(parts.count == 3)
        let verified = try #require(signer.verify(id: parts[0], signature: parts[1], fileName: parts[2]))
        #expect(verified.0 == reference)
        #expect(verified.1 == "holiday_photo.jpg")
    }

    @Test func aChangedSignatureNameReferenceOrSecretFails() {
        let parts = segments(signer.url(for: reference, fileName: "a.png"))
        var signature = Array(parts[1])
        signature[0] = signature[0] == "0" ? "1" : "0"
        #expect(signer.verify(id: parts[0], signature: String(signature), fileName: parts[2]) == nil)
        #expect(signer.verify(id: parts[0], signature: parts[1], fileName: "b.png") == nil)
        let other = segments(signer.url(for: MXCURI(mxc: "mxc://matrix.example:8448/other")!, fileName: "a.png"))
        #expect(signer.verify(id: other[0], signature: parts[1], fileName: parts[2]) == nil)
        let stranger = MediaLinkSigner(publicBase: "https://bridge.example/media", secret: "another")
        #expect(stranger.verify(id: parts[0], signature: parts[1], fileName: parts[2]) == nil)
        #expect(signer.verify(id: "!!!", signature: parts[1], fileName: parts[2]) == nil)
        #expect(signer.verify(id: parts[0], signature: "", fileName: parts[2]) == nil)
    }

    @Test func fileNamesAreSanitizedForPathsAndHeaders() {
        #expect(MediaLinkSigner.sanitizedFileName("a\"b\r\nc.png") == "a_b__c.png")
        #expect(MediaLinkSigner.sanitizedFileName("../../etc/passwd") == "_.._etc_passwd")
        #expect(MediaLinkSigner.sanitizedFileName("") == "file")
        #expect(MediaLinkSigner.sanitizedFileName("ünïcode.txt") == "_n_code.txt")
        let long = MediaLinkSigner.sanitizedFileName(String(repeating: "x", count: 300) + ".jpeg")
        #expect(long.count == 100)
        #expect(long.hasSuffix(".jpeg"))
    }

    @Test func mxcURIsAreValidated() {
        #expect(MXCURI(mxc: "mxc://server/id") != nil)
        #expect(MXCURI(mxc: "mxc://server/") == nil)
        #expect(MXCURI(mxc: "mxc:///id") == nil)
        #expect(MXCURI(mxc: "mxc://server/a/b") == nil)
        #expect(MXCURI(mxc: "https://server/id") == nil)
        #expect(MXCURI(mxc: "mxc://server/id%2F..") == nil)
    }
}
