@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import TestSupport
import Testing
import XMPP
import XMPPClient

/// Client mode's login credentials in the store: the user-agent id made once per account, the salted password and
/// the FAST token back as the connection kept them.
@Suite struct StoreClientCredentialKeeperTests {
    let account = JID("relay@localhost")!

    @Test func theUserAgentIDIsMadeOnceAndTheCredentialsComeBack() async throws {
        let fixture = try await StoreBackend.sqlite.open(persistent: true)
        let (keeper, first) = try await StoreClientCredentialKeeper.load(store: fixture.store, account: account)
        #expect(first == CredentialCache())
        #expect(UUID(uuidString: keeper.userAgentID) != nil && keeper.userAgentID == keeper.userAgentID.lowercased())
        let salted = SCRAMClient.SaltedPassword(hash: .sha256, salt: [1, 2, 3], iterations: 4096, bytes: Array(repeating: 7, count: 32))
        let token = FASTToken(mechanism: HashedTokenMechanism(binding: .tlsExporter), secret: "secret-token:fast-x", expiry: nil, count: 2)
        try await keeper.keep(CredentialCache(saltedPassword: salted, fastToken: token))
        let (again, kept) = try await StoreClientCredentialKeeper.load(store: fixture.reopen(), account: account)
        #expect(again.userAgentID == keeper.userAgentID, "the same client to the server after a restart")
        #expect(kept == CredentialCache(saltedPassword: salted, fastToken: token))
        let (other, nothing) = try await StoreClientCredentialKeeper.load(store: fixture.store, account: JID("other@localhost")!)
        #expect(other.userAgentID != keeper.userAgentID && nothing == CredentialCache(), "another account shares nothing")
    }

    /// The first of two processes (an active/standby pair's first start) to make the id wins; the other takes it.
    @Test func aUserAgentIDAlreadyMadeIsNotReplaced() async throws {
        let fixture = try await StoreBackend.sqlite.open(persistent: true)
        try await fixture.store.saveXMPPCredentials(StoredXMPPCredentials(userAgentID: "first"), account: account, replacing: false)
        try await fixture.store.saveXMPPCredentials(StoredXMPPCredentials(userAgentID: "second"), account: account, replacing: false)
        let (keeper, _) = try await StoreClientCredentialKeeper.load(store: fixture.store, account: account)
        #expect(keeper.userAgentID == "first")
    }

    @Test func whatThisVersionDoesNotKnowIsLeftOut() {
        let stored = StoredXMPPCredentials(userAgentID: "id", saltedPassword: .init(hash: "SCRAM-SHA-512", salt: [1], iterations: 1, bytes: [1]),
                                           fastToken: .init(mechanism: "HT-SHA-256-UNIQ", secret: "s", expiry: nil, count: 0))
        #expect(StoreClientCredentialKeeper.credentials(stored) == CredentialCache())
    }
}
