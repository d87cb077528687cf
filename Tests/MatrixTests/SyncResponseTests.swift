import Foundation
import IsthmusCommon
@testable import Matrix
import Testing

/// `/sync` answers as the bridge account reads them: timeline events with their room put in, limited timelines,
/// invitations with their inviter, removals, and events that do not decode left out without losing the rest.
@Suite struct SyncResponseTests {
    let account = UserID("@relay:example.org")!

    func decode(_ json: String) throws -> SyncResponse {
        let decoder = JSONDecoder()
        decoder.userInfo[SyncResponse.accountKey] = account
        return try decoder.decode(SyncResponse.self, from: Data(json.utf8))
    }

    @Test func theSpecsShapeReads() throws {
        let sync = try decode("""
            {"next_batch": "s72595_4483_1934",
             "rooms": {
               "join": {"!726s6s6q:example.com": {"timeline": {"limited": true, "prev_batch": "t34-23535_0_0", "events": [
                 {"content": {"body": "This is an example text message", "msgtype": "m.text"}, "event_id": "$143273582443PhrSn:example.org",
                  "origin_server_ts": 1432735824653, "sender": "@example:example.org", "type": "m.room.message",
                  "unsigned": {"age": 1234, "transaction_id": "m1"}},
                 {"content": "not an object", "event_id": "$bad:example.org", "type": "m.room.message"},
                 {"content": {"membership": "join"}, "event_id": "$join:example.org", "origin_server_ts": 1,
                  "sender": "@bob:example.org", "state_key": "@bob:example.org", "type": "m.room.member"}]}}},
               "invite": {"!696r7674:example.com": {"invite_state": {"events": [
                 {"content": {"name": "My Room Name"}, "sender": "@alice:example.com", "state_key": "", "type": "m.room.name"},
                 {"content": {"membership": "invite"}, "sender": "@alice:example.com", "state_key": "@relay:example.org", "type": "m.room.member"}]}}},
               "leave": {"!gone:example.com": {"timeline": {"events": [
                 {"content": {"membership": "ban", "reason": "spam"}, "event_id": "$ban:example.com", "origin_server_ts": 2,
                  "sender": "@mod:example.com", "state_key": "@relay:example.org", "type": "m.room.member"}]}}}
             }}
            """)
        #expect(sync.nextBatch == "s72595_4483_1934")
        let joined = try #require(sync.joined.first)
        #expect(joined.room == RoomID("!726s6s6q:example.com"))
        #expect(joined.limited && joined.prevBatch == "t34-23535_0_0")
        #expect(joined.events.map(\.eventID.rawValue) == ["$143273582443PhrSn:example.org", "$join:example.org"])
        #expect(joined.events.allSatisfy { $0.roomID == joined.room }, "the room is put in")
        #expect(sync.undecodable == 1, "the bad event is left out, the others kept")
        #expect(sync.invited == [.init(room: RoomID("!696r7674:example.com")!, inviter: UserID("@alice:example.com")!)])
        #expect(sync.left.first?.room == RoomID("!gone:example.com"))
        #expect(sync.left.first?.membership?.sender == UserID("@mod:example.com"))
    }

    @Test func anEmptyAnswerHasOnlyAPosition() throws {
        let sync = try decode(#"{"next_batch": "s1"}"#)
        #expect(sync == SyncResponse(nextBatch: "s1"))
        #expect(throws: DecodingError.self) { try decode(#"{"rooms": {}}"#) }
    }
}
