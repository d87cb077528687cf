import IsthmusCommon
import IsthmusStore
import MatrixAccount

/// The Matrix account's session in the bridge's store (`matrix_sessions`), for its ``SessionKeeper`` and the `login`
/// and `logout` commands. A row minted by an auth API this version does not know is no session.
public struct StoreSessionVault: SessionVault {
    let store: Store

    public init(store: Store) {
        self.store = store
    }

    public func session(of user: UserID) async throws -> MatrixSession? {
        guard let stored = try await store.matrixSession(of: user), let api = AuthAPI(rawValue: stored.authAPI) else { return nil }
        return MatrixSession(userID: stored.userID, deviceID: stored.deviceID, accessToken: stored.accessToken,
                             refreshToken: stored.refreshToken, expiresAt: stored.expiresAt, authAPI: api, oauthClientID: stored.oauthClientID)
    }

    public func keep(_ session: MatrixSession) async throws {
        try await store.saveMatrixSession(StoredMatrixSession(
            userID: session.userID, deviceID: session.deviceID, accessToken: session.accessToken, refreshToken: session.refreshToken,
            expiresAt: session.expiresAt, authAPI: session.authAPI.rawValue, oauthClientID: session.oauthClientID))
    }

    public func forget(_ user: UserID) async throws {
        try await store.deleteMatrixSession(of: user)
    }
}
