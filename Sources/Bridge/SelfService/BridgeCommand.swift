import IsthmusCommon

/// A `!isthmus …` command sent in a Matrix room (self-service linking). Pure value with its parser.
///
/// `!isthmus link MUC_JID OWNER_NICK` (the nick may contain spaces), `!isthmus unlink`, `!isthmus status`,
/// `!isthmus help`. A message that does not start with the prefix is not a command (nil); a malformed command is
/// ``usage(_:)`` with the line to show.
public enum BridgeCommand: Sendable, Equatable {
    case link(muc: JID, ownerNick: String)
    case unlink
    case status
    case help
    /// A command the parser did not accept: what to tell the sender.
    case usage(String)

    /// The prefix every command starts with.
    public static let prefix = "!isthmus"

    /// The help text (one `m.notice`).
    public static let helpText = """
        !isthmus link MUC_JID OWNER_NICK — link this room with the MUC; OWNER_NICK (an owner or admin of the MUC) must answer yes in private
        !isthmus unlink — end this room's link
        !isthmus status — show this room's link
        !isthmus help — this text
        """

    /// The command an `m.room.message` holds, if any: only `m.text` bodies are commands. A command is never bridged
    /// to XMPP (portals drop it), linked room or not.
    public static func parse(msgtype: MessageType, body: String) -> BridgeCommand? {
        msgtype == .text ? parse(body) : nil
    }

    /// Parses a message body; nil when it is not addressed to the bridge.
    public static func parse(_ body: String) -> BridgeCommand? {
        let trimmed = body.trimmedOfWhitespace
        guard trimmed == prefix || trimmed.hasPrefix(prefix + " ") else { return nil }
        let words = trimmed.dropFirst(prefix.count).split(separator: " ", omittingEmptySubsequences: true)
        guard let verb = words.first?.lowercased() else { return .help }
        let rest = words.dropFirst()
        switch verb {
        case "link":
            guard rest.count >= 2 else { return .usage("usage: !isthmus link MUC_JID OWNER_NICK") }
            guard let muc = JID(String(rest.first!)), muc.localpart != nil, muc.isBare else {
                return .usage("'\(rest.first!)' is not a MUC room JID (room@service)")
            }
            return .link(muc: muc, ownerNick: rest.dropFirst().joined(separator: " "))
        case "unlink", "status", "help":
            guard rest.isEmpty else { return .usage("usage: !isthmus \(verb)") }
            return verb == "unlink" ? .unlink : verb == "status" ? .status : .help
        default:
            return .usage("unknown command '\(verb)': try !isthmus help")
        }
    }
}
