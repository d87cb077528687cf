import Bridge
import IsthmusCommon

/// Syntax checks for room arguments of `link` / `unlink`. A malformed argument is a usage error (exit 64).
enum LinkArguments {
    /// A Matrix room argument: a room id or an alias.
    typealias MatrixRoom = LinkService.MatrixRoom

    static func matrixRoom(_ text: String, command: String) throws(UsageError) -> MatrixRoom {
        if let room = MatrixRoom(text) { return room }
        throw UsageError("'\(text)' is not a Matrix room id (!…) or alias (#name:server).", command: command)
    }

    /// A MUC room JID: bare, with a localpart (`room@conference.example.org`).
    static func muc(_ text: String, command: String) throws(UsageError) -> JID {
        guard let jid = JID(text), jid.localpart != nil, jid.isBare else {
            throw UsageError("'\(text)' is not a MUC room JID (room@service).", command: command)
        }
        return jid
    }
}
