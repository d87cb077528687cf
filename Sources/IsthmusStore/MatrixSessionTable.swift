import IsthmusCommon

/// `matrix_sessions`: the session of the ordinary Matrix account the bridge runs as in client mode (issue 28), one row
/// per account's user id: its device, the access token and the refresh token, when the access token expires
/// (milliseconds since 1970), which auth API minted them (`legacy` or `oauth`) and, under OAuth 2.0, the client id the
/// authorization server gave the bridge (its refreshes and revocation name it). A refresh rotates the pair in one
/// statement, so no reader ever sees a new access token beside an old refresh token. The tokens are secrets like the
/// configured password: the store is as private as the config, and nothing here prints them.
enum MatrixSessionTable {
    /// Migration 17 (both dialects).
    static let schema = """
        CREATE TABLE matrix_sessions (
            user_id        TEXT PRIMARY KEY,
            device_id      TEXT NOT NULL,
            access_token   TEXT NOT NULL,
            refresh_token  TEXT,
            expires_at_ms  BIGINT,
            auth_api       TEXT NOT NULL
        );
        """

    /// Migration 19 (both dialects): the OAuth 2.0 client id of a session minted there.
    static let oauthClientColumn = """
        ALTER TABLE matrix_sessions ADD COLUMN oauth_client_id TEXT;
        """
}

/// The Matrix account's session as the store keeps it.
public struct StoredMatrixSession: Sendable, Equatable {
    public var userID: UserID
    public var deviceID: DeviceID
    public var accessToken: AccessToken
    public var refreshToken: RefreshToken?
    /// When the access token expires, in milliseconds since 1970; nil: it does not.
    public var expiresAt: Int64?
    /// `legacy` or `oauth`, as the session's `AuthAPI` names it.
    public var authAPI: String
    /// Under OAuth 2.0: the client id the authorization server registered the bridge as.
    public var oauthClientID: String?

    public init(userID: UserID, deviceID: DeviceID, accessToken: AccessToken, refreshToken: RefreshToken?, expiresAt: Int64?,
                authAPI: String, oauthClientID: String? = nil) {
        self.oauthClientID = oauthClientID
        self.userID = userID
        self.deviceID = deviceID
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.authAPI = authAPI
    }
}

extension Store {
    /// The session kept for `user`, if any (a row that no longer reads as one is none).
    public func matrixSession(of user: UserID) throws -> StoredMatrixSession? {
        try read { db in
            try db.query("""
                SELECT device_id, access_token, refresh_token, expires_at_ms, auth_api, oauth_client_id FROM matrix_sessions
                WHERE user_id = ?
                """, user) { row -> StoredMatrixSession? in
                guard let device = row.string(0).flatMap(DeviceID.init), let access = row.string(1).flatMap(AccessToken.init),
                      let api = row.string(4) else { return nil }
                return StoredMatrixSession(userID: user, deviceID: device, accessToken: access,
                                           refreshToken: row.string(2).flatMap(RefreshToken.init), expiresAt: row.int(3).map(Int64.init),
                                           authAPI: api, oauthClientID: row.string(5))
            }.first ?? nil
        }
    }

    /// Keeps `session` for its user, replacing what was kept, in one statement.
    public func saveMatrixSession(_ session: StoredMatrixSession) throws {
        try write { db in
            _ = try db.run("""
                INSERT INTO matrix_sessions (user_id, device_id, access_token, refresh_token, expires_at_ms, auth_api, oauth_client_id)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (user_id) DO UPDATE SET device_id = excluded.device_id, access_token = excluded.access_token,
                    refresh_token = excluded.refresh_token, expires_at_ms = excluded.expires_at_ms, auth_api = excluded.auth_api,
                    oauth_client_id = excluded.oauth_client_id
                """, session.userID, session.deviceID.rawValue, session.accessToken.secret, session.refreshToken?.secret,
                session.expiresAt.map(Int.init), session.authAPI, session.oauthClientID)
        }
    }

    /// Forgets `user`'s session; true if one was kept.
    @discardableResult
    public func deleteMatrixSession(of user: UserID) throws -> Bool {
        try write { db in try db.run("DELETE FROM matrix_sessions WHERE user_id = ?", user) > 0 }
    }
}
