import IsthmusCommon

/// An endpoint of the appservice API the listener serves (appservice API v1.17 §2.3 "Endpoints"). Pure value.
public enum AppServiceRoute: Sendable, Equatable {
    /// `GET /health` or `/_isthmus/health`: container liveness probe, no authentication.
    case health
    /// `PUT /_matrix/app/v1/transactions/{txnId}` (or legacy `/transactions/{txnId}`).
    case transaction(TransactionID)
    /// `GET /_matrix/app/v1/users/{userId}` (or legacy `/users/{userId}`).
    case userQuery(UserID)
    /// `GET /_matrix/app/v1/rooms/{roomAlias}` (or legacy `/rooms/{roomAlias}`).
    case roomAliasQuery(RoomAlias)
    /// `POST /_matrix/app/v1/ping`.
    case ping
    /// `GET /_matrix/app/v1/thirdparty/protocol/{protocol}` (appservice API §2.3.5 "Third-party networks").
    case thirdPartyProtocol(String)
    /// `GET /_matrix/app/v1/thirdparty/location/{protocol}` with the protocol's fields as query parameters, or (no
    /// protocol) `GET /_matrix/app/v1/thirdparty/location?alias=…`.
    case thirdPartyLocation(protocol: String?)
    /// `GET /_matrix/app/v1/thirdparty/user[/{protocol}]`: no users are looked up (answered 404).
    case thirdPartyUser
    /// `/_isthmus/provision/v1/…`: the provisioning API (its own bearer token).
    case provisioning(ProvisioningRoute)
    /// `GET`/`HEAD /media/{id}/{signature}/{filename}`: a Matrix file served to XMPP clients (RICH.md §6). No token:
    /// the signature, checked by the handler, is the credential. The segments are kept raw.
    case media(id: String, signature: String, fileName: String)

    /// Whether the homeserver must present the hs_token for this route.
    public var requiresAuthentication: Bool {
        switch self {
        case .health, .media: false
        default: true
        }
    }

    /// A short name for logs and metrics (`transaction`, `user_query` …).
    public var name: String {
        switch self {
        case .health: "health"
        case .transaction: "transaction"
        case .userQuery: "user_query"
        case .roomAliasQuery: "room_alias_query"
        case .ping: "ping"
        case .thirdPartyProtocol: "thirdparty_protocol"
        case .thirdPartyLocation: "thirdparty_location"
        case .thirdPartyUser: "thirdparty_user"
        case .provisioning(.listLinks): "provision_list"
        case .provisioning(.createLink): "provision_link"
        case .provisioning(.deleteLink): "provision_unlink"
        case .media: "media"
        }
    }
}
