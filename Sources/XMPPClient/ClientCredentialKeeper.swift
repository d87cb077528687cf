import IsthmusCommon
import XMPP

/// Where the client connection keeps what its logins leave for the next (the bridge's store): SCRAM's salted password
/// and the XEP-0484 FAST token. Losing a write costs work, never the login: the password stays the fallback, and a
/// server keeps an older token valid until the newer one is used (XEP-0484 §4.5).
public protocol ClientCredentialKeeper: Sendable {
    /// Keeps `credentials` for the account; returns once it is durable.
    func keep(_ credentials: CredentialCache) async throws
}

/// Keeping the credentials: every change is written, coalesced (while one write is under way, later changes go as
/// one). On the ``ClientConnection`` actor.
extension ClientConnection {
    /// The credentials changed (a login left a salted password or a token, or the server refused one): the next
    /// connection uses them, and the keeper writes them.
    func setCredentials(_ new: CredentialCache) {
        guard new != credentials else { return }
        credentials = new
        keepingCredentials.changed += 1
        guard let credentialKeeper, !keepingCredentials.running else { return }
        keepingCredentials.running = true
        let failure = "Could not keep the XMPP login's credentials in the store; the next login uses the password"
        Task {
            await keepWriting(keepingCredentials, failure: failure) { try await credentialKeeper.keep(credentials) }
        }
    }
}
