import IsthmusCommon

/// An XMPP message body written with XEP-0393 Message Styling, and the Matrix users its pills mentioned.
///
/// Produced by ``HTMLToStyling/convert(_:mention:)``. Pure value; no I/O.
public struct StyledText: Sendable, Equatable {
    /// The `<body>` text: XEP-0393 directives, no markup, never a Matrix id taken from a link target.
    public var body: String
    /// The users of every `https://matrix.to/#/@user:server` (or `matrix:u/…`) pill, in order of first appearance,
    /// each once (for XEP-0372 references and `m.mentions`).
    public var mentions: [UserID]

    /// A styled body and its mentions.
    public init(body: String, mentions: [UserID] = []) {
        self.body = body
        self.mentions = mentions
    }
}
