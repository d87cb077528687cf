import IsthmusCommon
import IsthmusStore
import Media
import XMPP

/// Matrix media messages to the MUC (RICH.md §6): the file goes as a link served by the bridge (``MediaProxy``),
/// the body being the URL alone so that XMPP clients render the attachment (Conversations inlines only a body equal
/// to the URL), with XEP-0066 OOB and XEP-0447 SFS (media type, name, size, dimensions). A caption — `body` differing
/// from `filename`, or `formatted_body` — would stop that rendering, so it follows as a second message (and is the
/// SFS `desc` of the first).
extension PortalStateMachine {
    /// The stanza for a media message, or nil when it cannot go as a file (no link signer, a malformed `mxc://`).
    func mediaStanza(_ attachment: MatrixAttachment, body: String, html: String?) -> (stanza: OutgoingGroupchat, excerpt: String)? {
        guard let links = configuration.mediaLinks, let reference = MediaReference(mxc: attachment.mxc) else { return nil }
        let name = attachment.name(body: body)
        let url = links.url(for: reference, fileName: name)
        var file = attachment.sharedFile(url: url, name: name)
        var caption: String?
        if attachment.caption(body: body) != nil || html != nil {
            let source = attachment.caption(body: body) ?? body
            caption = RichTranslation.toXMPP(msgtype: .text, body: source, html: html, nick: { mucNick(of: $0) })?.body
            if caption == name { caption = nil }
        }
        file.desc = caption
        var stanza = OutgoingGroupchat(body: url, references: MessageReferences(file: file))
        stanza.caption = caption
        return (stanza, RichTranslation.excerpt(caption ?? name))
    }
}
