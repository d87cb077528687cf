import IsthmusCommon
import Testing

@Suite struct MatrixIDTests {
    @Test func roomIDs() {
        #expect(RoomID("!abc:localhost")?.rawValue == "!abc:localhost")
        // Room version 12 ids have no server part.
        #expect(RoomID("!31hneApxJ_1o-63DmFrpeqnkFfWppnzWso1JvH3ogLM")?.description
            == "!31hneApxJ_1o-63DmFrpeqnkFfWppnzWso1JvH3ogLM")
        for invalid in ["", "!", "abc:localhost", "#abc:localhost", "!a b:localhost", "!abc\n", "!" + String(repeating: "a", count: 255)] {
            #expect(RoomID(invalid) == nil, "accepted \(invalid.debugDescription)")
        }
        #expect(RoomID("!" + String(repeating: "a", count: 254)) != nil)
    }

    @Test func roomAliases() throws {
        let alias = try #require(RoomAlias("#xmpp_room:example.org:8448"))
        #expect(alias.localpart == "xmpp_room")
        #expect(alias.server == "example.org:8448")
        for invalid in ["", "#", "#room", "#:localhost", "#room:", "!room:localhost", "#ro om:localhost", "room:localhost"] {
            #expect(RoomAlias(invalid) == nil, "accepted \(invalid.debugDescription)")
        }
    }

    @Test func userIDs() throws {
        let user = try #require(UserID("@_xmpp_alice:localhost"))
        #expect(user.localpart == "_xmpp_alice")
        #expect(user.server == "localhost")
        #expect(UserID(localpart: "isthmus", server: "localhost") == UserID("@isthmus:localhost"))
        #expect(UserID(localpart: "", server: "localhost") == nil)
        for invalid in ["", "@", "@alice", "@:localhost", "@alice:", "alice:localhost", "@al ice:localhost", "@alice:local\thost"] {
            #expect(UserID(invalid) == nil, "accepted \(invalid.debugDescription)")
        }
        // 255 bytes at most, sigil included.
        #expect(UserID("@a:" + String(repeating: "b", count: 252)) != nil)
        #expect(UserID("@a:" + String(repeating: "b", count: 253)) == nil)
    }

    @Test func eventIDs() {
        #expect(EventID("$abc123")?.rawValue == "$abc123")
        #expect(EventID("$abc:localhost") != nil)
        for invalid in ["", "$", "abc", "!abc", "$a b", "$a\u{7f}"] {
            #expect(EventID(invalid) == nil, "accepted \(invalid.debugDescription)")
        }
    }

    @Test func transactionIDs() {
        #expect(TransactionID("1234")?.description == "1234")
        #expect(TransactionID("") == nil)
        #expect(TransactionID("a b") == nil)
    }
}
