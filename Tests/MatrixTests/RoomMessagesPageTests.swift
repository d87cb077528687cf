import Foundation
import IsthmusCommon
import Matrix
import MatrixClient
import Testing

@Suite struct RoomMessagesPageTests {
    @Test func aMalformedEventIsCountedAndTheRestOfThePageKept() throws {
        let json = #"""
        {"start":"s1","end":"t9","chunk":[
          {"type":"m.room.message","event_id":"$a","room_id":"!r:localhost","sender":"@alice:localhost",
           "origin_server_ts":1700000000000,"unsigned":{"age":1200},"content":{"msgtype":"m.text","body":"hi"}},
          {"type":"m.room.message","event_id":42,"room_id":"!r:localhost"},
          {"type":"m.room.member","event_id":"$b","room_id":"!r:localhost","sender":"@alice:localhost","state_key":"@alice:localhost",
           "origin_server_ts":1699999999000,"content":{"membership":"join"}}
        ]}
        """#
        let page = try JSONDecoder().decode(RoomMessagesPage.self, from: Data(json.utf8))
        #expect(page.events.map(\.eventID.rawValue) == ["$a", "$b"])
        #expect(page.undecodable == 1)
        #expect(page.end == "t9")
        #expect(page.events.first?.unsigned?.age == 1200)
    }

    @Test func theStartOfTheTimelineHasNoEndToken() throws {
        let page = try JSONDecoder().decode(RoomMessagesPage.self, from: Data(#"{"start":"s1","chunk":[]}"#.utf8))
        #expect(page.events.isEmpty && page.undecodable == 0 && page.end == nil)
    }

    @Test func aBodyThatIsNotAPageIsAnError() {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(RoomMessagesPage.self, from: Data(#"{"chunk":"nope"}"#.utf8)) }
    }
}
