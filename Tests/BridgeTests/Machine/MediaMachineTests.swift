@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Matrix
import Media
import Testing
import XMPP

/// Media through the portal machine (RICH.md §6): which XMPP messages share a file and what the Matrix send looks like;
/// what a Matrix media message becomes on XMPP (link body, OOB, SFS, caption rule).
@Suite struct MediaMachineTests {
    let signer = MediaLinkSigner(publicBase: "https://bridge.example/media", secret: "k")

    func txnID(_ f: MachineFixture, _ key: String) -> ClientTransactionID {
        f.naming.matrixTxnID(room: f.muc, stanzaID: StanzaID(key)!)
    }

    func deliver(_ f: inout MachineFixture, _ body: String, _ references: MessageReferences = MessageReferences()) -> [MachineFixture.Action] {
        var message = f.groupchat("romeo", body, stanzaID: "S9", occupantID: "occ-romeo")
        message.references = references
        let first = f.act(.xmppMessage(message))
        guard first == [.matrixDelivery(.lookUpBridged(message))] else { return first }
        return f.act(.matrixDelivery(.lookedUp(message, bridged: false, targets: .init())))
    }

    func sends(_ actions: [MachineFixture.Action]) -> [PortalStateMachine.MatrixSend] {
        guard actions.count == 1, case .matrixDelivery(.send(let delivery)) = actions[0] else { return [] }
        return delivery.sends
    }

    // MARK: XMPP → Matrix

    @Test func anOOBLinkWhoseBodyIsTheURLIsAFileWithoutCaption() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let url = "https://upload.example/abc/photo.jpg"
        let actions = deliver(&f, url, MessageReferences(file: SharedFile(url: url)))
        #expect(sends(actions) == [.media(XMPPFileLink(url: url, name: nil, mediaType: nil, caption: nil, bare: false),
                                          fallback: OutgoingMatrixMessage(kind: .text, body: url), txnID: txnID(f, "S9"))])
    }

    @Test func anSFSFileTakesItsMetadataAndTheBodyAsCaption() {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        let url = "https://upload.example/x"
        let file = SharedFile(url: url, mediaType: "application/pdf", name: "report.pdf", size: 10)
        let actions = deliver(&f, "the report", MessageReferences(file: file))
        #expect(sends(actions) == [.media(XMPPFileLink(url: url, name: "report.pdf", mediaType: "application/pdf", caption: "the report", bare: false),
                                          fallback: OutgoingMatrixMessage(kind: .text, body: "the report"), txnID: txnID(f, "S9"))])
        // A body marked as SFS's fallback is no caption; SFS's own description is.
        var marked = file
        marked.desc = "Q3"
        let fallback = MessageReferences(fallbacks: [.init(feature: XMPPNamespace.fileSharing, ranges: nil)], file: marked)
        #expect(PortalStateMachine.fileLink(body: "Shared a file", references: fallback)?.caption == "Q3")
    }

    @Test func aBareLinkIsAFileCandidateButTextAroundItIsNot() {
        #expect(PortalStateMachine.fileLink(body: " https://x.example/a.png\n", references: MessageReferences())
            == XMPPFileLink(url: "https://x.example/a.png", name: nil, mediaType: nil, caption: nil, bare: true))
        #expect(PortalStateMachine.fileLink(body: "look https://x.example/a.png", references: MessageReferences()) == nil)
        #expect(PortalStateMachine.fileLink(body: "https:///nohost", references: MessageReferences()) == nil)
        #expect(PortalStateMachine.fileLink(body: "ftp://x.example/a", references: MessageReferences()) == nil)
        // OMEMO-encrypted files (aesgcm://) cannot be read by the bridge.
        #expect(PortalStateMachine.fileLink(body: "aesgcm://x.example/a#key", references: MessageReferences(file: SharedFile(url: "aesgcm://x.example/a#key"))) == nil)
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        guard case .message? = sends(deliver(&f, "see https://x.example")).first else {
            Issue.record("text with a link is a text message")
            return
        }
    }

    // MARK: Matrix → XMPP

    func media(_ f: MachineFixture, _ seq: Int64, body: String, fileName: String?, html: String? = nil) -> QueuedMatrixEvent {
        let attachment = MatrixAttachment(mxc: "mxc://localhost/AbCd", fileName: fileName,
                                          info: MediaInfo(mimeType: "image/png", size: 42, width: 3, height: 2))
        return QueuedMatrixEvent(seq: seq, event: MatrixRoomEvent(
            eventID: EventID("$e\(seq)")!, room: f.room, sender: f.alice,
            content: .message(msgtype: .image, body: body, details: MessageDetails(html: html, media: attachment))))
    }

    /// The stanza the event goes out as (a message referring to nothing is mapped at once, no lookup).
    func stanza(_ f: inout MachineFixture, _ queued: QueuedMatrixEvent, file: Bool = true) throws -> OutgoingGroupchat {
        let actions = f.act(.matrixEvents([queued]))
        guard actions.count == 1, case .xmppDelivery(.insertMapping(let mapping, _, let delivery, _)) = actions[0] else {
            throw Failure(description: "expected one insertMapping, got \(actions)")
        }
        if file { #expect(mapping.payload != nil, "the stanza is kept for a resend after a restart") }
        return delivery.stanza
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    @Test func aMatrixImageIsItsSignedLinkWithOOBAndSFSAndNoCaption() throws {
        var f = MachineFixture(mediaLinks: signer)
        f.activate(members: [f.alice: "Alice"])
        let sent = try stanza(&f, media(f, 1, body: "cat.png", fileName: nil))
        let url = signer.url(for: MXCURI(mxc: "mxc://localhost/AbCd")!, fileName: "cat.png")
        #expect(sent.body == url, "the body is the URL alone, so clients render the file")
        #expect(sent.caption == nil)
        #expect(sent.references.file == SharedFile(url: url, mediaType: "image/png", name: "cat.png", size: 42, width: 3, height: 2))
        #expect(!(sent.body ?? "").contains("mxc://"), "no Matrix reference in the body")
    }

    @Test func withXMPPUploadAMediaMessageWaitsForItsUploadAndGoesAsTheUploadsURLElseAsTheBridgesLink() throws {
        var f = MachineFixture(mediaLinks: signer, uploadsMedia: true)
        f.activate(members: [f.alice: "Alice"])
        let queued = media(f, 1, body: "cat.png", fileName: nil)
        // The upload is its own action, after the targets and before the message is mapped.
        #expect(f.act(.matrixEvents([queued])) == [.xmppDelivery(.resolveMatrixTargets(queued))])
        let upload = PortalStateMachine.MediaUpload(queued: queued, targets: PortalStateMachine.MatrixTargets(), mxc: "mxc://localhost/AbCd",
                                                    name: "cat.png", declaredSize: 42, mediaType: "image/png")
        #expect(f.act(.xmppDelivery(.targetsResolved(queued, PortalStateMachine.MatrixTargets()))) == [.xmppDelivery(.uploadMedia(upload))])
        let uploaded = "https://upload.example/slot/cat.png"
        let actions = f.act(.xmppDelivery(.mediaUploaded(upload, url: uploaded)))
        guard actions.count == 1, case .xmppDelivery(.insertMapping(_, _, let delivery, _)) = actions[0] else {
            throw Failure(description: "expected one insertMapping, got \(actions)")
        }
        #expect(delivery.stanza.body == uploaded)
        #expect(delivery.stanza.references.file?.url == uploaded, "SFS (and OOB) carry the upload's URL")
        // No upload (the fallback): the bridge's signed link.
        let next = media(f, 2, body: "dog.png", fileName: nil)
        #expect(f.act(.matrixEvents([next])) == [.xmppDelivery(.resolveMatrixTargets(next))])
        var second = upload
        (second.queued, second.name) = (next, "dog.png")
        #expect(f.act(.xmppDelivery(.targetsResolved(next, PortalStateMachine.MatrixTargets()))) == [.xmppDelivery(.uploadMedia(second))])
        let fallback = f.act(.xmppDelivery(.mediaUploaded(second, url: nil)))
        guard fallback.count == 1, case .xmppDelivery(.insertMapping(_, _, let linked, _)) = fallback[0] else {
            throw Failure(description: "expected one insertMapping, got \(fallback)")
        }
        #expect(linked.stanza.body == signer.url(for: MXCURI(mxc: "mxc://localhost/AbCd")!, fileName: "dog.png"))
    }

    @Test func aCaptionFollowsAsASecondMessage() throws {
        var f = MachineFixture(mediaLinks: signer)
        f.activate(members: [f.alice: "Alice"])
        // filename differs from body: body is the caption (spec v1.10).
        let captioned = try stanza(&f, media(f, 1, body: "look at this", fileName: "cat.png"))
        #expect(captioned.body?.hasSuffix("/cat.png") == true)
        #expect(captioned.caption == "look at this")
        #expect(captioned.references.file?.desc == "look at this")
        // body == filename: no caption.
        let plain = try stanza(&f, media(f, 2, body: "cat.png", fileName: "cat.png"))
        #expect(plain.caption == nil)
        // A formatted caption goes as styling.
        let formatted = try stanza(&f, media(f, 3, body: "so *cute*", fileName: "cat.png", html: "so <strong>cute</strong>"))
        #expect(formatted.caption == "so *cute*")
    }

    @Test func theCaptionGoesOutRightBehindItsFileFromTheSamePuppet() throws {
        var f = MachineFixture(mediaLinks: signer)
        f.activate(members: [f.alice: "Alice"])
        let queued = media(f, 1, body: "look at this", fileName: "cat.png")
        let actions = f.act(.matrixEvents([queued]))
        guard actions.count == 1, case .xmppDelivery(.insertMapping(_, _, let delivery, _)) = actions[0] else {
            throw Failure(description: "expected one insertMapping, got \(actions)")
        }
        let alice = f.puppetJID(f.alice)
        #expect(f.act(.xmppDelivery(.mappingInserted(delivery, inserted: true))) == [.xmppDelivery(.sendGroupchat(delivery, from: alice))])
        #expect(f.act(.xmppDelivery(.groupchatSent(delivery, nil))).first == .xmppDelivery(.sendCaption("look at this", of: delivery.originID, from: alice)))
        // A file that did not go out takes no caption with it.
        let next = media(f, 2, body: "and this", fileName: "dog.png")
        guard case .xmppDelivery(.insertMapping(_, _, let failing, _))? = f.act(.matrixEvents([next])).first else {
            throw Failure(description: "expected an insertMapping")
        }
        #expect(f.act(.xmppDelivery(.mappingInserted(failing, inserted: true))) == [.xmppDelivery(.sendGroupchat(failing, from: alice))])
        #expect(!f.act(.xmppDelivery(.groupchatSent(failing, .refused(StanzaErrorInfo(condition: .forbidden, text: nil))))).contains {
            if case .xmppDelivery(.sendCaption) = $0 { true } else { false }
        })
    }

    @Test func withoutLinksOrWithABadMXCTheMessageGoesAsText() throws {
        var f = MachineFixture()
        f.activate(members: [f.alice: "Alice"])
        #expect(try stanza(&f, media(f, 1, body: "cat.png", fileName: nil), file: false).body == "cat.png")
        #expect(MatrixAttachment(mxc: "mxc://x/y", fileName: "a", info: nil).caption(body: "a") == nil)
        #expect(MatrixAttachment(mxc: "mxc://x/y", fileName: "a", info: nil).caption(body: "b") == "b")
        #expect(MatrixAttachment(mxc: "mxc://x/y", fileName: nil, info: nil).caption(body: "b") == nil)
    }
}
