/// A client-server API call the bridge makes, by the `method` label it has in the `isthmus_homeserver_request*`
/// metrics (the raw values are those labels: keep them stable).
public enum HomeserverCall: String, Sendable {
    case ban
    case createRoom = "create_room"
    case getState = "get_state"
    case invite
    case join
    case joinedMembers = "joined_members"
    case kick
    case leave
    case messages
    case ping
    case react
    case redact
    case register
    case send
    case sendReceipt = "send_receipt"
    case setDisplayname = "set_displayname"
    case setRoomAvatar = "set_room_avatar"
    case setRoomDisplayname = "set_room_displayname"
    case setState = "set_state"
    case setTyping = "set_typing"
    case state
    case versions
}
