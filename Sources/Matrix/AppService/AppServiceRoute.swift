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
        case .provisioning(.listLinks): "provision_list"
        case .provisioning(.createLink): "provision_link"
        case .provisioning(.deleteLink): "provision_unlink"
        case .media: "media"
        }
    }
}
