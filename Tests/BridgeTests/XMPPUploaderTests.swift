@testable import Bridge
import Foundation
import IsthmusCommon
import Media
import Testing
import XMPP

/// `media.xmpp_upload`: when a Matrix file goes as the bridge's link instead (decided before any transfer).
@Suite struct XMPPUploaderTests {
    func uploader(_ link: FakeXMPPLink) -> XMPPUploader {
        let settings = MediaSettings(homeserverURL: URL(string: "http://127.0.0.1:9")!, asToken: "t",
                                     signer: MediaLinkSigner(publicBase: "https://bridge.example/media", secret: "k"), maxSize: 50 << 20)
        return XMPPUploader(settings: settings, importer: MediaImporter(settings: settings, logger: .disabled), xmpp: link,
                            serverDomain: JID("localhost")!, requester: JID("isthmus@bridge.localhost")!, logger: .disabled)
    }

    @Test func theServerDomainIsTheComponentsParent() {
        #expect(XMPPUploader.serverDomain(ofComponent: "bridge.example.org") == JID("example.org"))
        #expect(XMPPUploader.serverDomain(ofComponent: "bridge") == nil)
        #expect(XMPPUploader.serverDomain(ofComponent: "bridge.") == nil)
    }

    @Test func noServiceFallsBack() async {
        let link = FakeXMPPLink()
        let outcome = await uploader(link).upload(mxc: "mxc://localhost/AbCd", name: "a.png", declaredSize: 10, mediaType: "image/png")
        #expect(outcome == .fallback(.noService))
    }

    @Test func aFileDeclaredLargerThanTheServiceTakesFallsBackWithoutAnySlot() async {
        let link = FakeXMPPLink()
        link.state.withLock { $0.uploadService = HTTPUpload.Service(jid: JID("upload.localhost")!, maxFileSize: 1000) }
        let outcome = await uploader(link).upload(mxc: "mxc://localhost/AbCd", name: "a.png", declaredSize: 1001, mediaType: "image/png")
        #expect(outcome == .fallback(.tooLarge(size: 1001, limit: 1000)))
        #expect(link.state.withLock { $0.slotRequests.isEmpty })
    }
}
