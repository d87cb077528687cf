import IsthmusCommon

/// Where the account's session is kept across restarts (the bridge's store: `matrix_sessions`). Two implementations:
/// the store's, and a test's in memory.
public protocol SessionVault: Sendable {
    /// The session kept for `user`, if any.
    func session(of user: UserID) async throws -> MatrixSession?
    /// Keeps `session` for its user, replacing what was kept, in one write; returns once it is durable.
    func keep(_ session: MatrixSession) async throws
    /// Forgets `user`'s session.
    func forget(_ user: UserID) async throws
}
