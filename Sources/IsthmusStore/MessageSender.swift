import IsthmusCommon

/// Who sent a bridged message, on the side it came from: a Matrix user, or a MUC occupant identified as well as the
/// room allows (real JID, else XEP-0421 occupant-id, else nick). Stored as text in `message_map.sender`.
public enum MessageSender: Sendable, Hashable, CustomStringConvertible {
    case matrix(UserID)
    case occupant(OccupantIdentity)

    /// A MUC occupant's identity, strongest first.
    public enum OccupantIdentity: Sendable, Hashable {
        case realJID(JID)
        case occupantID(OccupantID)
        case nick(String)
    }

    /// The stored form: a Matrix user id as it is; occupants prefixed by kind (`jid:`, `occupant-id:`, `nick:`).
    public var description: String {
        switch self {
        case .matrix(let user): user.rawValue
        case .occupant(.realJID(let jid)): "jid:\(jid.bare)"
        case .occupant(.occupantID(let id)): "occupant-id:\(id.rawValue)"
        case .occupant(.nick(let nick)): "nick:\(nick)"
        }
    }

    /// Reads the stored form. Rows written before the kinds were prefixed hold a bare JID or a nick (XMPP → Matrix)
    /// or a Matrix user id (Matrix → XMPP): `direction` tells them apart.
    public init(stored: String, direction: MessageMapping.Direction) {
        if direction == .matrixToXMPP, let user = UserID(stored) {
            self = .matrix(user)
        } else if stored.hasPrefix("jid:"), let jid = JID(String(stored.dropFirst(4))) {
            self = .occupant(.realJID(jid))
        } else if stored.hasPrefix("occupant-id:"), let id = OccupantID(String(stored.dropFirst(12))) {
            self = .occupant(.occupantID(id))
        } else if stored.hasPrefix("nick:") {
            self = .occupant(.nick(String(stored.dropFirst(5))))
        } else if stored.contains("@"), let jid = JID(stored) {
            self = .occupant(.realJID(jid))
        } else {
            self = .occupant(.nick(stored))
        }
    }

    /// The Matrix user, for a message from Matrix.
    public var matrixUser: UserID? {
        if case .matrix(let user) = self { return user }
        return nil
    }
}
