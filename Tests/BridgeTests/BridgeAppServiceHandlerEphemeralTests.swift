@testable import Bridge
import Foundation
import IsthmusCommon
import Matrix
import MatrixAppService
import Testing

/// A transaction's typing and receipts as the portals get them: bridge-owned users left out, only public receipts on
/// the main timeline, the newest per user; and the stable `ephemeral` key read instead of the unstable one, never both.
@Suite struct BridgeAppServiceHandlerEphemeralTests {
    let namespace = GhostNamespace(prefix: "_xmpp_", serverName: "localhost", botLocalpart: "isthmus")!

    func ephemeral(_ json: String) throws -> [(RoomID, MatrixEphemeral)] {
        let transaction = try TransactionDecoder.decode(Data(json.utf8), id: #require(TransactionID("t1"))).get()
        return BridgeAppServiceHandler.ephemeral(transaction.ephemeral, isOurs: namespace.isOurs)
    }

    @Test func typingListsLeaveBridgeOwnedUsersOut() throws {
        let routed = try ephemeral(#"""
            {"events": [], "ephemeral": [{"type": "m.typing", "room_id": "!r:localhost",
              "content": {"user_ids": ["@alice:localhost", "@_xmpp_romeo:localhost", "@isthmus:localhost"]}}]}
            """#)
        #expect(routed.count == 1)
        #expect(routed.first?.0 == RoomID("!r:localhost"))
        #expect(routed.first?.1 == .typing([UserID("@alice:localhost")!]))
    }

    @Test func onlyPublicUnthreadedReceiptsOfMatrixUsersAreKeptTheNewestPerUser() throws {
        let routed = try ephemeral(#"""
            {"events": [], "ephemeral": [{"type": "m.receipt", "room_id": "!r:localhost", "content": {
              "$old": {"m.read": {"@alice:localhost": {"ts": 1}}},
              "$new": {"m.read": {"@alice:localhost": {"ts": 2, "thread_id": "main"}}},
              "$private": {"m.read.private": {"@alice:localhost": {"ts": 3}, "@bob:localhost": {"ts": 3}}},
              "$thread": {"m.read": {"@bob:localhost": {"ts": 4, "thread_id": "$root"}}},
              "$ghost": {"m.read": {"@_xmpp_romeo:localhost": {"ts": 5}, "@isthmus:localhost": {"ts": 5}}}
            }}]}
            """#)
        #expect(routed.count == 1)
        #expect(routed.first?.1 == .read([UserID("@alice:localhost")!: EventID("$new")!]))
        let none = try ephemeral(#"""
            {"events": [], "ephemeral": [{"type": "m.receipt", "room_id": "!r:localhost", "content": {
              "$private": {"m.read.private": {"@alice:localhost": {"ts": 3}}}}}]}
            """#)
        #expect(none.isEmpty, "a private receipt alone routes nothing")
    }

    @Test func theStableKeyIsReadAndTheUnstableOneOnlyWithoutIt() throws {
        let both = try ephemeral(#"""
            {"events": [],
             "ephemeral": [{"type": "m.typing", "room_id": "!r:localhost", "content": {"user_ids": ["@alice:localhost"]}}],
             "de.sorunome.msc2409.ephemeral": [{"type": "m.typing", "room_id": "!r:localhost", "content": {"user_ids": ["@alice:localhost"]}}]}
            """#)
        #expect(both.count == 1, "the same list under both keys is handled once")
        let unstable = try ephemeral(#"""
            {"events": [], "de.sorunome.msc2409.ephemeral": [{"type": "m.typing", "room_id": "!r:localhost", "content": {"user_ids": ["@bob:localhost"]}}]}
            """#)
        #expect(unstable.first?.1 == .typing([UserID("@bob:localhost")!]))
    }
}
