import IsthmusCommon
import IsthmusStore
import Media
import XMPP

/// Matrix media messages to the MUC (RICH.md §6): the file goes as a link served by the bridge (``MediaProxy``),
/// the body being the URL alone so that XMPP clients render the attachment (Conversations inlines only a body equal
/// to the URL), with XEP-0066 OOB and XEP-0447 SFS (media type, name, size, dimensions). A caption — `body` differing
/// from `filename`, or `formatted_body` — would stop that rendering, so it follows as a second message (and is the
/// SFS `desc` of the first).
extension XMPPDeliveryMachine {
    /// The stanza for a media message, or nil when it cannot go as a file (not uploaded, and no link signer: Matrix
    /// client mode serves no files). `uploadedURL`: the file's URL on the XMPP server's upload service, sent instead
    /// of the bridge's link.
    func mediaStanza(_ attachment: MatrixAttachment, body: String, html: String?,
                     uploadedURL: String? = nil, in room: Room) -> (stanza: OutgoingGroupchat, excerpt: String)? {
        let name = attachment.name(body: body)
        guard let url = uploadedURL ?? configuration.mediaLinks.map({ attachment.link($0, name: name) }) else { return nil }
        let (file, caption) = attachment.xmppFile(url: url, body: body, html: html, nick: room.mucNick)
        var stanza = OutgoingGroupchat(body: url, references: MessageReferences(file: file))
        stanza.caption = caption
        return (stanza, RichTranslation.excerpt(caption ?? name))
    }

    /// With `media.xmpp_upload`: the upload a new media message (not an edit) waits for.
    func mediaUpload(_ queued: QueuedMatrixEvent, targets: MatrixTargets) -> MediaUpload? {
        guard configuration.uploadsMedia, targets.uploadedURL == nil, case .message(_, let body, let details) = queued.event.content,
              let attachment = details?.media, details?.replaces == nil else { return nil }
        return MediaUpload(queued: queued, targets: targets, mxc: attachment.mxc, keys: attachment.keys, name: attachment.name(body: body),
                           declaredSize: attachment.info?.size, mediaType: attachment.info?.mimeType)
    }
}
