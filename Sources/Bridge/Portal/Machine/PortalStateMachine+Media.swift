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
    /// `uploadedURL`: the file's URL on the XMPP server's upload service, sent instead of the bridge's link.
    func mediaStanza(_ attachment: MatrixAttachment, body: String, html: String?,
                     uploadedURL: String? = nil) -> (stanza: OutgoingGroupchat, excerpt: String)? {
        guard let links = configuration.mediaLinks, let reference = MediaReference(mxc: attachment.mxc) else { return nil }
        let name = attachment.name(body: body)
        let url = uploadedURL ?? links.url(for: reference, fileName: name)
        let (file, caption) = attachment.xmppFile(url: url, body: body, html: html, nick: { mucNick(of: $0) })
        var stanza = OutgoingGroupchat(body: url, references: MessageReferences(file: file))
        stanza.caption = caption
        return (stanza, RichTranslation.excerpt(caption ?? name))
    }
}

/// XMPP files to Matrix: which messages share a file (RICH.md §6). The transfer itself is an effect
/// (``MatrixSend/media(_:fallback:txnID:)``, performed by ``MediaImporter``).
extension PortalStateMachine {
    /// The file `body` and `references` share: an OOB or SFS URL (the body is a caption when it is more than the URL
    /// and not marked as SFS's fallback), or a body that is one http(s) URL and nothing else. nil: not a file.
    /// `aesgcm://` links (OMEMO-encrypted files) are not: the bridge cannot read them. Pure.
    static func fileLink(body: String, references: MessageReferences) -> XMPPFileLink? {
        let trimmed = String(body.trimmedOfWhitespace)
        if let file = references.file, isHTTPURL(file.url) {
            let bodyIsFallback = trimmed == file.url
                || references.fallbackRanges(for: XMPPNamespace.fileSharing).map { $0 == nil } == true
            let caption = bodyIsFallback ? file.desc : (trimmed.isEmpty ? file.desc : trimmed)
            return XMPPFileLink(url: file.url, name: file.name, mediaType: file.mediaType, caption: caption, bare: false)
        }
        guard isHTTPURL(trimmed), !trimmed.contains(where: { $0.isWhitespace }) else { return nil }
        return XMPPFileLink(url: trimmed, name: nil, mediaType: nil, caption: nil, bare: true)
    }

    /// Whether `text` starts with `http://` or `https://` and has a host.
    static func isHTTPURL(_ text: String) -> Bool {
        let lower = text.prefix(8).lowercased()
        let rest = lower.hasPrefix("https://") ? text.dropFirst(8) : lower.hasPrefix("http://") ? text.dropFirst(7) : nil
        guard let rest, let first = rest.first, first != "/" else { return false }
        return text.utf8.count <= 4096
    }

    /// With `media.xmpp_upload`: the upload a new media message (not an edit) waits for.
    func mediaUpload(_ queued: QueuedMatrixEvent, targets: MatrixTargets) -> MediaUpload? {
        guard configuration.uploadsMedia, targets.uploadedURL == nil, case .message(_, let body, let details) = queued.event.content,
              let attachment = details?.media, details?.replaces == nil else { return nil }
        return MediaUpload(queued: queued, targets: targets, mxc: attachment.mxc, name: attachment.name(body: body),
                           declaredSize: attachment.info?.size, mediaType: attachment.info?.mimeType)
    }
}
