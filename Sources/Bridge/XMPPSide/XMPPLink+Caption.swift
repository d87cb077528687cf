import IsthmusCommon

/// Where a file's caption goes: into the MUC, or as a MUC private message to one occupant.
enum CaptionRoute: Sendable, Equatable {
    case groupchat(room: JID, from: JID)
    case chat(from: JID, to: JID)
}

extension OriginID {
    /// The origin-id of the caption that follows the file sent with this one.
    var caption: OriginID? { OriginID(rawValue + "-caption") }
}

extension XMPPLink {
    /// Sends a file's caption as a message of its own right behind the file (an XMPP client shows a file only when
    /// the body is its URL alone), with origin-id ``OriginID/caption`` of the file's. The map tracks the file, so a
    /// failure here must not make the file go out again: it is only logged (an SFS `desc` carries the caption too).
    /// Returns the caption's origin-id when it went out. Does XMPP I/O.
    func sendCaption(_ caption: String, of file: OriginID, _ route: CaptionRoute, logger: Logger) async -> OriginID? {
        guard let captionID = file.caption else { return nil }
        do {
            switch route {
            case .groupchat(let room, let from):
                try await sendGroupchat(room: room, from: from, body: caption, references: MessageReferences(), originID: captionID)
            case .chat(let from, let to):
                try await sendChat(from: from, to: to, body: caption, references: MessageReferences(), originID: captionID)
            }
            return captionID
        } catch {
            logger.warning("A file's caption could not be sent", metadata: ["xmpp.origin.id": captionID.rawValue, "error": "\(error)"])
            return nil
        }
    }
}
