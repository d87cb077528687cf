import IsthmusCommon
import Matrix
import MatrixCrypto

/// The file of a media message the bridge posts in Matrix: uploaded already (its `mxc://` URI), with its msgtype,
/// file name and `info`, and what opens it when it was encrypted. Pure value.
public struct OutgoingMedia: Sendable, Equatable {
    /// `m.image`, `m.video`, `m.audio` or `m.file`.
    public var msgtype: MessageType
    public var mxc: MXCURI
    public var fileName: String
    public var info: MediaInfo
    /// The secrets of a file uploaded encrypted (for an encrypted room): `mxc` holds its ciphertext.
    public var keys: AttachmentKeys?

    public init(msgtype: MessageType, mxc: MXCURI, fileName: String, info: MediaInfo, keys: AttachmentKeys? = nil) {
        self.msgtype = msgtype
        self.mxc = mxc
        self.fileName = fileName
        self.info = info
        self.keys = keys
    }
}

/// A file an XMPP message shares (XEP-0066 OOB, XEP-0447 SFS, or a bare link as the whole body), as the portal machine
/// hands it to the media effect: where to fetch it and what the message says about it. Pure value.
public struct XMPPFileLink: Sendable, Hashable {
    public var url: String
    /// The sender's name for the file (SFS `name`); nil: the URL's last path segment.
    public var name: String?
    /// The sender's media type (SFS `media-type`).
    public var mediaType: String?
    /// Text to show with the file (the body when it is more than the URL, or SFS `desc`).
    public var caption: String?
    /// Only a link in the body, no OOB or SFS: a web page (HTML) stays a link.
    public var bare: Bool

    public init(url: String, name: String?, mediaType: String?, caption: String?, bare: Bool) {
        self.url = url
        self.name = name
        self.mediaType = mediaType
        self.caption = caption
        self.bare = bare
    }
}
