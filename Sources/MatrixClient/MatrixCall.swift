/// The client-server API calls ``MatrixClient`` makes, named as its methods are: the `call` of a ``MatrixError``
/// and the `matrix.call` of a log line.
public enum MatrixCall: String, Sendable, CustomStringConvertible {
    case versions, whoAmI, registerGhost, login, ping
    case loginFlows, refresh, logout, tokenOwner, authMetadata
    /// OAuth 2.0 ("next-generation auth"): client registration, the device authorization, the token endpoint, revocation.
    case oauthRegistration, oauthDeviceAuthorization, oauthToken, oauthRevocation
    /// Getting a token for a call from ``AccessTokens`` (an ordinary account's session), not a call of its own.
    case accessToken
    case setDisplayName, setAvatarURL, setRoomDisplayName, setRoomAvatarURL
    case send, sendState, redact, stateEvent, event, roomState, roomMessages, eventContext
    case resolveAlias, createRoom, setTyping, sendReadReceipt
    case setAlias, deleteAlias, roomAliases, publicRooms
    case join, leave, invite, kick, ban, unban, joinedMembers, members, joinedRooms
    case sync
    /// End-to-end encryption: the bridge's users' devices and keys.
    case createDevice, uploadKeys, uploadCrossSigningKeys, uploadSignatures, queryKeys, claimKeys, sendToDevice

    public var description: String { rawValue }
}
