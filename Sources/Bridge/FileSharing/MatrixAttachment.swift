import IsthmusCommon
import Matrix
import MatrixCrypto
import Media
import XMPP

/// The file of a Matrix media message (`m.image`, `m.file`, `m.video`, `m.audio`, or an `m.sticker` event): its
/// `mxc://` URI, its `filename` (when `body` is a caption, spec v1.10) and its `info`; in an encrypted room, what
/// opens it (its `file`, spec §11.12.4.5). Codable: queued durably with the event. Pure value.
public struct MatrixAttachment: Sendable, Equatable, Codable {
    public var mxc: MXCURI
    public var fileName: String?
    public var info: MediaInfo?
    /// An encrypted file's secrets: the homeserver holds only its ciphertext.
    public var keys: AttachmentKeys?

    public init(mxc: MXCURI, fileName: String?, info: MediaInfo?, keys: AttachmentKeys? = nil) {
        self.mxc = mxc
        self.fileName = fileName
        self.info = info
        self.keys = keys
    }

    /// The attachment of a media message's `file`; nil when it is not one this bridge can open (another version or
    /// algorithm, a malformed key, IV or hash, no `mxc://` URI): the message then goes as its text.
    public init?(file: EncryptedFile, fileName: String?, info: MediaInfo?) {
        guard let mxc = file.url.flatMap(MXCURI.init(mxc:)), let keys = AttachmentKeys(file) else { return nil }
        self.init(mxc: mxc, fileName: fileName, info: info, keys: keys)
    }

    /// The bridge's signed link to the file (``MediaProxy`` serves it, decrypted when it is encrypted).
    func link(_ signer: MediaLinkSigner, name: String) -> String {
        signer.url(for: mxc, fileName: name, secret: keys?.linkSecret)
    }

    /// The caption of a media message (spec §11.2.1.5 "Media captions"): `body` when `filename` is present and
    /// differs from it; nil otherwise (`body` is then the file name).
    public func caption(body: String) -> String? {
        guard let fileName, !fileName.isEmpty, body != fileName, !body.isEmpty else { return nil }
        return body
    }

    /// The name the file goes by: `filename`, else `body`, else `file` — with the extension of its media type when it
    /// has none (XMPP clients inline by extension; sticker bodies are descriptions such as "Happy cat").
    public func name(body: String) -> String {
        var name = fileName.flatMap { $0.isEmpty ? nil : $0 } ?? (body.isEmpty ? "file" : body)
        if MediaKind.mediaType(forFileName: name) == nil, let ext = MediaKind.fileExtension(forMediaType: info?.mimeType) {
            name += "." + ext
        }
        return name
    }

    /// What the XMPP side is told about the file at `url` (XEP-0447 metadata).
    func sharedFile(url: String, name: String) -> SharedFile {
        SharedFile(url: url, mediaType: info?.mimeType, name: name, size: info?.size,
                   width: info?.width.map { Int(clamping: $0) }, height: info?.height.map { Int(clamping: $0) })
    }

    /// The file at `url` as it goes to XMPP, and its caption as XMPP text (the caption, or the formatted body, with
    /// pills as `nick` names them; also the SFS `desc`), nil when there is none or it only repeats the file's name.
    func xmppFile(url: String, body: String, html: String?, nick: (UserID) -> String?) -> (file: SharedFile, caption: String?) {
        let name = name(body: body)
        var file = sharedFile(url: url, name: name)
        var caption: String?
        if self.caption(body: body) != nil || html != nil {
            caption = RichTranslation.toXMPP(msgtype: .text, body: self.caption(body: body) ?? body, html: html, nick: nick)?.body
            if caption == name { caption = nil }
        }
        file.desc = caption
        return (file, caption)
    }
}
