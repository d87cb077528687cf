@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import Media
import Testing
import XMPP

/// What an uploaded XMPP file looks like in Matrix: the msgtype of its kind, `url`, `filename`, `info`, the caption as body.
@Suite struct OutgoingMediaContentTests {
    @Test func aMediaMessageCarriesItsFile() throws {
        var message = OutgoingMatrixMessage(kind: .text, body: "the report")
        message.media = OutgoingMedia(msgtype: .file, mxc: "mxc://localhost/abc", fileName: "report.pdf",
                                      info: MediaInfo(mimeType: "application/pdf", size: 10))
        let content = AppServiceMatrixLink.content(message)
        #expect(content.messageType == .file)
        #expect(content.body == "the report")
        #expect(content.url == "mxc://localhost/abc")
        #expect(content.fileName == "report.pdf")
        #expect(content.info == MediaInfo(mimeType: "application/pdf", size: 10))
        let json = try #require(String(data: try JSONEncoder().encode(content), encoding: .utf8))
        #expect(json.contains("\"msgtype\":\"m.file\""))
        #expect(json.contains("\"mimetype\":\"application\\/pdf\""))
    }
}
