import FoundationEssentials
import IsthmusCommon
import Matrix

extension MatrixClient {
    /// `GET /_matrix/client/versions`: the spec versions the homeserver supports (client-server API §2.1). No auth needed.
    public func versions() async throws(MatrixError) -> [String] {
        struct Versions: Decodable { var versions: [String] }
        var request = ClientRequest(.versions, "GET", ["_matrix/client/versions"])
        request.authenticated = false
        return try await perform(request, as: Versions.self).versions
    }

    /// `GET /account/whoami` as the token's user or as `user` (client-server API §5.7.2).
    public func whoAmI(as user: UserID? = nil) async throws(MatrixError) -> UserID {
        try await perform(ClientRequest(.whoAmI, "GET", ["_matrix/client/v3/account/whoami"], query: acting(user)),
                          as: Bodies.UserIDResponse.self).userID
    }

    /// Registers the ghost `user` (appservice API §2.4.2 "Server admin style permissions":
    /// `m.login.application_service` with its localpart, `inhibit_login`). An existing account (`M_USER_IN_USE`)
    /// counts as success; a user outside the namespace fails with `M_EXCLUSIVE`.
    public func registerGhost(_ user: UserID) async throws(MatrixError) -> GhostRegistration {
        struct Register: Encodable {
            var type = "m.login.application_service"
            var username: String
            var inhibitLogin = true
            enum CodingKeys: String, CodingKey {
                case type, username
                case inhibitLogin = "inhibit_login"
            }
        }
        let body = try json(Register(username: user.localpart), call: .registerGhost)
        do {
            let response = try await perform(ClientRequest(.registerGhost, "POST", ["_matrix/client/v3/register"], body: body),
                                             as: Bodies.UserIDResponse.self)
            return .registered(response.userID)
        } catch where error.errcode == MatrixErrorCode.userInUse {
            return .alreadyRegistered(user)
        }
    }

    /// Sets `user`'s global display name (nil clears it) (client-server API §10.2.1 "Profiles").
    public func setDisplayName(_ name: String?, of user: UserID) async throws(MatrixError) {
        struct Body: Encodable { var displayname: String? }
        let body = try json(Body(displayname: name), call: .setDisplayName)
        let _: Bodies.Empty = try await perform(ClientRequest(
            .setDisplayName, "PUT", ["_matrix/client/v3/profile", .param("userId", user), "displayname"], query: acting(user), body: body))
    }

    /// Sets `user`'s global avatar to an `mxc://` URI (nil clears it).
    public func setAvatarURL(_ url: String?, of user: UserID) async throws(MatrixError) {
        struct Body: Encodable {
            var avatarURL: String?
            enum CodingKeys: String, CodingKey { case avatarURL = "avatar_url" }
        }
        let body = try json(Body(avatarURL: url), call: .setAvatarURL)
        let _: Bodies.Empty = try await perform(ClientRequest(
            .setAvatarURL, "PUT", ["_matrix/client/v3/profile", .param("userId", user), "avatar_url"], query: acting(user), body: body))
    }

    /// Asks the homeserver to ping this appservice's listener (`POST /_matrix/client/v1/appservice/{appserviceId}/ping`,
    /// client-server API §… "Appservice ping", v1.7). Returns the round trip the homeserver measured. On success
    /// Synapse also retries at once the transactions it held back while the listener was unreachable. Not retried.
    public func ping(appServiceID: String, transactionID: String? = nil) async throws(MatrixError) -> Duration {
        struct Body: Encodable {
            var transactionID: String?
            enum CodingKeys: String, CodingKey { case transactionID = "transaction_id" }
        }
        struct Response: Decodable {
            var durationMilliseconds: Int64
            enum CodingKeys: String, CodingKey { case durationMilliseconds = "duration_ms" }
        }
        let body = try json(Body(transactionID: transactionID), call: .ping)
        let response = try await perform(ClientRequest(
            .ping, "POST", ["_matrix/client/v1/appservice", .param("appserviceId", appServiceID), "ping"], body: body,
            retry: .rateLimitOnly), as: Response.self)
        return .milliseconds(response.durationMilliseconds)
    }
}
