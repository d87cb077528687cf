import IsthmusCommon
import IsthmusStore

/// Why ``LinkService`` did not link or unlink: one family for the CLI, the provisioning API and the Matrix commands.
/// Each case carries the ids it is about; ``description`` is the one-line reason shown to people.
public enum LinkRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// The MUC is linked with another room already.
    case mucAlreadyLinked(JID, with: RoomID)
    /// The Matrix room is linked with another MUC already.
    case roomAlreadyLinked(RoomID, with: JID)
    /// No room has this alias.
    case unknownAlias(RoomAlias)
    /// The homeserver knows no such room.
    case unknownRoom(RoomID)
    /// The bot is neither invited nor allowed to join.
    case botCannotJoin(RoomID, bot: UserID)
    /// The room encrypts its events (`m.room.encryption`), which this bridge cannot read.
    case encryptedRoom(RoomID)
    /// The room does not encrypt its events, and this bridge bridges only encrypted rooms (`encryption.require`).
    case unencryptedRoom(RoomID)
    /// Nothing is linked under the given name.
    case notLinked(String)
    /// The MUC's domain is not one the config allows.
    case mucDomainNotAllowed(JID)
    /// The homeserver rejected the appservice token.
    case tokenRejected
    /// The homeserver could not be reached (network, timeout).
    case homeserverUnreachable(String)
    /// Any other refusal by the homeserver.
    case homeserverRefused(errcode: String, message: String)

    public var description: String {
        switch self {
        case .mucAlreadyLinked(let muc, let room): "\(muc) is already linked with \(room)"
        case .roomAlreadyLinked(let room, let muc): "\(room) is already linked with \(muc)"
        case .unknownAlias(let alias): "unknown room: no room has the alias \(alias)"
        case .unknownRoom(let room): "unknown room: \(room) does not exist (or the homeserver knows no server for it)"
        case .botCannotJoin(let room, let bot): "the bridge bot \(bot) is not invited to \(room) and may not join it: invite it first"
        case .encryptedRoom(let room):
            "\(room) is end-to-end encrypted and this bridge cannot read encrypted messages: link an unencrypted room (encryption cannot be turned off)"
        case .unencryptedRoom(let room):
            "\(room) is not end-to-end encrypted and this bridge bridges only encrypted rooms (encryption.require): turn on encryption in the room first"
        case .notLinked(let target): "not linked: \(target)"
        case .mucDomainNotAllowed(let muc): "\(muc.domain) is not among the MUC services this bridge may link"
        case .tokenRejected: "the homeserver rejected the appservice token (as_token): is the registration loaded?"
        case .homeserverUnreachable(let reason): "cannot reach the homeserver: \(reason)"
        case .homeserverRefused(let errcode, let message): "the homeserver refused: \(errcode): \(message)"
        }
    }
}
