import IsthmusCommon

/// Content of `m.room.message` (spec §11.2.1 "m.room.message msgtypes"). Pure value, `Codable` both ways.
///
/// `msgtype` and `body` are required; unknown fields (extensible-event mirrors, thumbnails) are ignored.
public struct MessageContent: Sendable, Equatable, Codable {
    /// `msgtype`, e.g. ``MessageType/text``; unknown types are kept as they are.
    public var messageType: MessageType
    /// The plain-text body (for media: the caption or the file name).
    public var body: String
    /// `format`, e.g. `org.matrix.custom.html`, when ``formattedBody`` is set.
    public var format: String?
    /// `formatted_body` — HTML for `org.matrix.custom.html` (spec §11.2.1.7 "HTML").
    public var formattedBody: String?
    /// `url` — the `mxc://` URI of a media message.
    public var url: String?
    /// `file` — a media message's encrypted file, instead of `url`, in an encrypted room (spec §11.12.4.5).
    public var file: EncryptedFile?
    /// `filename` — the original file name when ``body`` is a caption (v1.10).
    public var fileName: String?
    /// `info` — media metadata.
    public var info: MediaInfo?
    /// `m.relates_to` — edit, reply or thread.
    public var relatesTo: RelatesTo?
    /// `m.new_content` — the replacement content of an edit.
    public var newContent: NewContent?
    /// `m.mentions` — intentional mentions (spec §11.38 "User and room mentions").
    public var mentions: Mentions?
    /// Whom a bridge bot's message speaks for (MSC4144, ``PerMessageProfile/contentKey``).
    public var perMessageProfile: PerMessageProfile?

    /// The body format for HTML (`org.matrix.custom.html`).
    public static let htmlFormat = "org.matrix.custom.html"

    public init(
        messageType: MessageType, body: String, format: String? = nil, formattedBody: String? = nil,
        url: String? = nil, fileName: String? = nil, info: MediaInfo? = nil, relatesTo: RelatesTo? = nil,
        newContent: NewContent? = nil, mentions: Mentions? = nil
    ) {
        self.messageType = messageType
        self.body = body
        self.format = format
        self.formattedBody = formattedBody
        self.url = url
        self.fileName = fileName
        self.info = info
        self.relatesTo = relatesTo
        self.newContent = newContent
        self.mentions = mentions
    }

    /// A plain `m.text` message.
    public static func text(_ body: String) -> MessageContent { MessageContent(messageType: .text, body: body) }

    /// The HTML body when ``format`` is `org.matrix.custom.html`.
    public var html: String? { format == Self.htmlFormat ? formattedBody : nil }

    enum CodingKeys: String, CodingKey {
        case messageType = "msgtype"
        case body, format
        case formattedBody = "formatted_body"
        case url, file
        case fileName = "filename"
        case info
        case relatesTo = "m.relates_to"
        case newContent = "m.new_content"
        case mentions = "m.mentions"
        case perMessageProfile = "com.beeper.per_message_profile"
    }
}

/// `msgtype` of an `m.room.message`. Any string is accepted; the spec's types are constants.
public struct MessageType: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public static let text = MessageType(rawValue: "m.text")
    public static let emote = MessageType(rawValue: "m.emote")
    public static let notice = MessageType(rawValue: "m.notice")
    public static let image = MessageType(rawValue: "m.image")
    public static let file = MessageType(rawValue: "m.file")
    public static let audio = MessageType(rawValue: "m.audio")
    public static let video = MessageType(rawValue: "m.video")

    /// Whether this type carries a media `url`.
    public var isMedia: Bool { [.image, .file, .audio, .video].contains(self) }

    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(String.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// `m.new_content` of an edit: the message as it reads after the edit (spec §11.37). Pure value.
public struct NewContent: Sendable, Equatable, Codable {
    public var messageType: MessageType
    public var body: String
    public var format: String?
    public var formattedBody: String?
    /// `m.mentions` of the message as edited.
    public var mentions: Mentions?

    public init(messageType: MessageType, body: String, format: String? = nil, formattedBody: String? = nil,
                mentions: Mentions? = nil) {
        self.messageType = messageType
        self.body = body
        self.format = format
        self.formattedBody = formattedBody
        self.mentions = mentions
    }

    enum CodingKeys: String, CodingKey {
        case messageType = "msgtype"
        case body, format
        case formattedBody = "formatted_body"
        case mentions = "m.mentions"
    }
}

/// `m.mentions` (spec §11.38). Pure value.
public struct Mentions: Sendable, Equatable, Codable {
    public var userIDs: [UserID]?
    public var room: Bool?

    public init(userIDs: [UserID]? = nil, room: Bool? = nil) {
        self.userIDs = userIDs
        self.room = room
    }

    enum CodingKeys: String, CodingKey {
        case userIDs = "user_ids"
        case room
    }
}
