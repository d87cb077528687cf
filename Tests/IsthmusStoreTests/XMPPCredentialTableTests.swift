import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// `xmpp_credentials`: what client mode's logins keep for the next, per account on both backends.
@Suite struct XMPPCredentialTableTests {
    let account = JID("relay@example.org")!

    @Test(arguments: StoreBackend.all) func credentialsAreKeptReplacedAndPerAccount(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let store = fixture.store
        #expect(try await store.xmppCredentials(account: account) == nil)
        let fresh = StoredXMPPCredentials(userAgentID: "d4ac9e2d-2a6b-4f2e-9c58-1a0e3f5b7c11")
        try await store.saveXMPPCredentials(fresh, account: account.with(resource: "isthmus")!)   // keyed by the bare JID
        #expect(try await store.xmppCredentials(account: account) == fresh)
        let full = StoredXMPPCredentials(
            userAgentID: fresh.userAgentID,
            saltedPassword: .init(hash: "SHA-256", salt: [0, 1, 0xFF, 0x2C], iterations: 4096, bytes: Array(repeating: 0xA5, count: 32)),
            fastToken: .init(mechanism: "HT-SHA-256-ENDP", secret: "secret-token:fast-'ü'", expiry: "2026-12-31T00:00:00Z", count: 7))
        try await store.saveXMPPCredentials(full, account: account)
        #expect(try await fixture.reopen().xmppCredentials(account: account) == full, "kept across a reopen, replaced in place")
        try await store.saveXMPPCredentials(StoredXMPPCredentials(userAgentID: "another"), account: account, replacing: false)
        #expect(try await store.xmppCredentials(account: account) == full, "only if nothing was kept")
        #expect(try await store.xmppCredentials(account: JID("other@example.org")!) == nil, "another account has none of it")
        var forgotten = full
        forgotten.fastToken = nil
        forgotten.saltedPassword = nil
        try await store.saveXMPPCredentials(forgotten, account: account)
        #expect(try await store.xmppCredentials(account: account) == forgotten)
    }
}
