import IsthmusCommon
@testable import IsthmusStore
import TestSupport
import Testing

/// `xmpp_sessions`: client mode's XEP-0198 session, kept per account on both backends.
@Suite struct XMPPSessionTableTests {
    let account = JID("relay@example.org")!

    func session(h: UInt32, unacknowledged: [String] = []) -> StoredXMPPSession {
        StoredXMPPSession(jid: JID("relay@example.org/isthmus")!, sessionID: "sm-\(h)", location: "[::1]:5222", inboundHandled: h,
                          outboundAcknowledged: UInt32.max, unacknowledged: unacknowledged)
    }

    @Test(arguments: StoreBackend.all) func aSessionIsKeptReplacedAndForgotten(_ backend: StoreBackend) async throws {
        let fixture = try await backend.open(persistent: true)
        let store = fixture.store
        #expect(try await store.xmppSession(account: account) == nil)
        let first = session(h: 1, unacknowledged: ["<message xmlns='jabber:component:accept' to='r@muc'><body>a &amp; b\n'ü'</body></message>", "<presence/>"])
        try await store.saveXMPPSession(first, account: account.with(resource: "any")!)   // keyed by the bare JID
        #expect(try await store.xmppSession(account: account) == first)
        let second = session(h: UInt32.max)
        try await store.saveXMPPSession(second, account: account)
        #expect(try await fixture.reopen().xmppSession(account: account) == second, "kept across a reopen, replaced in place")
        #expect(try await store.xmppSession(account: JID("other@example.org")!) == nil, "one row per account")
        try await store.saveXMPPSession(nil, account: account)
        #expect(try await store.xmppSession(account: account) == nil)
    }
}
