import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import XMPP
import XMPPClient

/// What client mode's logins keep for the next, in the bridge's store (`xmpp_credentials`) for the account: the
/// SASL2 user-agent id (made on the first run), the salted password and the FAST token.
struct StoreClientCredentialKeeper: ClientCredentialKeeper {
    let store: Store
    let account: JID
    let userAgentID: String

    func keep(_ credentials: CredentialCache) async throws {
        try await store.saveXMPPCredentials(Self.stored(credentials, userAgentID: userAgentID), account: account)
    }

    /// The account's keeper and what it kept; the first run for an account makes its user-agent id and keeps it, so
    /// every later login is the same client to the server (the same Bind2 resource, its FAST tokens).
    static func load(store: Store, account: JID) async throws -> (keeper: StoreClientCredentialKeeper, credentials: CredentialCache) {
        var stored = try await store.xmppCredentials(account: account)
        if stored == nil {
            let fresh = StoredXMPPCredentials(userAgentID: SASL2UserAgent.random().id)
            try await store.saveXMPPCredentials(fresh, account: account, replacing: false)
            stored = try await store.xmppCredentials(account: account) ?? fresh   // another process may have made one first
        }
        let kept = stored!
        return (StoreClientCredentialKeeper(store: store, account: account, userAgentID: kept.userAgentID), credentials(kept))
    }

    static func stored(_ credentials: CredentialCache, userAgentID: String) -> StoredXMPPCredentials {
        StoredXMPPCredentials(
            userAgentID: userAgentID,
            saltedPassword: credentials.saltedPassword.map {
                .init(hash: $0.hash.mechanismName(plus: false), salt: $0.salt, iterations: $0.iterations, bytes: $0.bytes)
            },
            fastToken: credentials.fastToken.map {
                .init(mechanism: $0.mechanism.name.rawValue, secret: $0.secret, expiry: $0.expiry, count: $0.count)
            })
    }

    /// What the connection can use of a stored row: a hash or mechanism this version does not know is left out.
    static func credentials(_ stored: StoredXMPPCredentials) -> CredentialCache {
        let salted = stored.saltedPassword.flatMap { kept in
            [SCRAMHash.sha1, .sha256].first { $0.mechanismName(plus: false) == kept.hash }.map {
                SCRAMClient.SaltedPassword(hash: $0, salt: kept.salt, iterations: kept.iterations, bytes: kept.bytes)
            }
        }
        let token = stored.fastToken.flatMap { kept in
            SASLMechanismName(kept.mechanism).flatMap(HashedTokenMechanism.init).map {
                FASTToken(mechanism: $0, secret: kept.secret, expiry: kept.expiry, count: kept.count)
            }
        }
        return CredentialCache(saltedPassword: salted, fastToken: token)
    }
}
