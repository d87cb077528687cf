import Foundation
import IsthmusCommon
import Matrix
import Testing

/// Decoding of transactions and typed events, including hostile and oversized bodies.
@Suite struct EventModelTests {
    static let transactionJSON = #"""
    {"events": [
      {"type": "m.room.message", "event_id": "$m1", "room_id": "!r", "sender": "@alice:localhost", "origin_server_ts": 1700000000000,
       "unsigned": {"age": 12, "transaction_id": "t1", "future": true}, "new_top_level": [1,2],
       "content": {"msgtype": "m.text", "body": "hi", "format": "org.matrix.custom.html", "formatted_body": "<b>hi</b>",
                   "m.relates_to": {"m.in_reply_to": {"event_id": "$m0"}}, "m.mentions": {"user_ids": ["@bob:localhost"]}, "x.custom": {"a": 1}}},
      {"type": "m.room.message", "event_id": "$m2", "room_id": "!r", "sender": "@alice:localhost", "origin_server_ts": 1,
       "content": {"msgtype": "m.text", "body": "* hi!", "m.new_content": {"msgtype": "m.text", "body": "hi!"},
                   "m.relates_to": {"rel_type": "m.replace", "event_id": "$m1"}}},
      {"type": "m.room.message", "event_id": "$m3", "room_id": "!r", "sender": "@alice:localhost", "origin_server_ts": 1,
       "content": {"msgtype": "m.image", "body": "cat.png", "url": "mxc://localhost/abc", "info": {"mimetype": "image/png", "size": 1024.0, "w": "640", "h": 480}}},
      {"type": "m.room.member", "event_id": "$j1", "room_id": "!r", "sender": "@alice:localhost", "state_key": "@_xmpp_bob:localhost", "origin_server_ts": 1,
       "content": {"membership": "invite", "displayname": "Bob", "avatar_url": 42, "reason": "come"}},
      {"type": "m.room.redaction", "event_id": "$x1", "room_id": "!r", "sender": "@alice:localhost", "origin_server_ts": 1, "redacts": "$m1", "content": {}},
      {"type": "m.room.redaction", "event_id": "$x2", "room_id": "!r", "sender": "@alice:localhost", "origin_server_ts": 1, "content": {"redacts": "$m2", "reason": "oops"}},
      {"type": "m.reaction", "event_id": "$re", "room_id": "!r", "sender": "@alice:localhost", "origin_server_ts": 1,
       "content": {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$m1", "key": "👍"}}},
      {"type": "m.room.name", "event_id": "$n", "room_id": "!r", "sender": "@alice:localhost", "state_key": "", "origin_server_ts": 1, "content": {"name": "Room"}},
      {"type": "m.room.topic", "event_id": "$t", "room_id": "!r", "sender": "@alice:localhost", "state_key": "", "origin_server_ts": 1, "content": {"topic": "Topic"}},
      {"type": "m.room.avatar", "event_id": "$a", "room_id": "!r", "sender": "@alice:localhost", "state_key": "", "origin_server_ts": 1, "content": {"url": "mxc://x/y"}},
      {"type": "m.room.power_levels", "event_id": "$p", "room_id": "!r", "sender": "@alice:localhost", "state_key": "", "origin_server_ts": 1,
       "content": {"users": {"@alice:localhost": 100, "@old:localhost": "50", "@bad:localhost": {}}, "kick": "75", "ban": 60.0}},
      {"type": "m.room.tombstone", "event_id": "$ts", "room_id": "!r", "sender": "@alice:localhost", "state_key": "", "origin_server_ts": 1,
       "content": {"body": "moved", "replacement_room": "!new"}},
      {"type": "org.example.custom", "event_id": "$u", "room_id": "!r", "sender": "@alice:localhost", "origin_server_ts": 1, "content": {"k": [1, "two", null]}},
      {"type": "m.room.message", "event_id": "$bad", "room_id": "!r", "sender": "@alice:localhost", "origin_server_ts": 1, "content": {"msgtype": 5}},
      {"type": "m.room.message", "room_id": "!r", "sender": "@alice:localhost", "origin_server_ts": 1, "content": {}},
      "not an event",
      {"type": "m.room.message", "event_id": "$last", "room_id": "!r", "sender": "@alice:localhost", "origin_server_ts": 1, "content": {"msgtype": "m.notice", "body": "end"}}
    ],
    "ephemeral": [
      {"type": "m.typing", "room_id": "!r", "content": {"user_ids": ["@alice:localhost", "not a user"]}},
      {"type": "m.receipt", "room_id": "!r", "content": {"$m1": {"m.read": {"@bob:localhost": {"ts": 5, "thread_id": "main"}}}}},
      {"type": "m.presence", "sender": "@alice:localhost", "content": {"presence": "online"}},
      {"type": "m.typing", "content": {}}
    ],
    "to_device": [{"type": "m.whatever"}]}
    """#

    func decode(_ json: String) -> Result<Transaction, AppServiceRejection> {
        TransactionDecoder.decode(Data(json.utf8), id: TransactionID("1")!)
    }

    @Test func decodesEveryModelledTypeAndKeepsOrder() throws {
        let transaction = try decode(Self.transactionJSON).get()
        #expect(transaction.events.map(\.eventID.rawValue) == ["$m1", "$m2", "$m3", "$j1", "$x1", "$x2", "$re", "$n", "$t", "$a", "$p", "$ts", "$u", "$bad", "$last"])
        #expect(transaction.rejectedEvents.map(\.index) == [14, 15, 3])

        let first = transaction.events[0]
        #expect(first.unsigned?.transactionID == "t1" && first.originServerTS == 1700000000000)
        guard case .message(let text) = first.content else { Issue.record("m1"); return }
        #expect(text.html == "<b>hi</b>" && text.relatesTo?.replyToEventID == EventID("$m0"))
        #expect(text.mentions?.userIDs == [UserID("@bob:localhost")!])
        guard case .message(let edit) = transaction.events[1].content else { Issue.record("m2"); return }
        #expect(edit.relatesTo?.replacedEventID == EventID("$m1") && edit.newContent?.body == "hi!")
        guard case .message(let image) = transaction.events[2].content else { Issue.record("m3"); return }
        #expect(image.messageType.isMedia && image.url == "mxc://localhost/abc")
        #expect(image.info == MediaInfo(mimeType: "image/png", size: 1024, width: 640, height: 480))
        guard case .member(let member) = transaction.events[3].content else { Issue.record("j1"); return }
        #expect(member == MemberContent(membership: .invite, displayName: "Bob", avatarURL: nil, reason: "come"))
        #expect(transaction.events[3].memberUserID == UserID("@_xmpp_bob:localhost"))
        #expect(transaction.events[4].redactedEventID == EventID("$m1"))
        #expect(transaction.events[5].redactedEventID == EventID("$m2"))
        guard case .reaction(let reaction) = transaction.events[6].content else { Issue.record("re"); return }
        #expect(reaction.targetEventID == EventID("$m1") && reaction.key == "👍")
        #expect(transaction.events[7].content == .roomName(RoomNameContent(name: "Room")))
        #expect(transaction.events[8].content == .roomTopic(RoomTopicContent(topic: "Topic")))
        #expect(transaction.events[9].content == .roomAvatar(RoomAvatarContent(url: "mxc://x/y")))
        guard case .powerLevels(let levels) = transaction.events[10].content else { Issue.record("p"); return }
        #expect(levels.level(of: UserID("@alice:localhost")!) == 100 && levels.level(of: UserID("@old:localhost")!) == 50)
        #expect(levels.level(of: UserID("@bad:localhost")!) == 0 && levels.kick == 75 && levels.ban == 60 && levels.redact == 50)
        #expect(transaction.events[11].content == .tombstone(TombstoneContent(body: "moved", replacementRoom: RoomID("!new")!)))
        #expect(transaction.events[12].content == .unknown(type: "org.example.custom", content: .object(["k": .array([.integer(1), .string("two"), .null])])))
        guard case .malformed(let type, _, let reason) = transaction.events[13].content else { Issue.record("bad"); return }
        #expect(type == "m.room.message" && reason.contains("msgtype"))

        #expect(transaction.ephemeral.count == 3)
        #expect(transaction.ephemeral[0] == .typing(roomID: RoomID("!r")!, userIDs: [UserID("@alice:localhost")!]))
        #expect(transaction.ephemeral[1] == .receipts(roomID: RoomID("!r")!, [Receipt(eventID: EventID("$m1")!, receiptType: "m.read",
                                                                                       userID: UserID("@bob:localhost")!, timestamp: 5, threadID: "main")]))
        guard case .unknown("m.presence", _) = transaction.ephemeral[2] else { Issue.record("presence"); return }
    }

    @Test func encodedTransactionsDecodeToTheSameEvents() throws {
        let transaction = try decode(Self.transactionJSON).get()
        let body = try JSONEncoder().encode(TransactionBody(events: transaction.events, ephemeral: transaction.ephemeral))
        let again = try TransactionDecoder.decode(body, id: transaction.id).get()
        #expect(again.events == transaction.events)
        #expect(again.ephemeral == transaction.ephemeral)
    }

    @Test func unstableEphemeralKeyIsRead() throws {
        let transaction = try decode(#"{"events": [], "de.sorunome.msc2409.ephemeral": [{"type": "m.typing", "room_id": "!r", "content": {"user_ids": []}}]}"#).get()
        #expect(transaction.ephemeral == [.typing(roomID: RoomID("!r")!, userIDs: [])])
    }

    @Test(arguments: ["", "{", "{oops}", "\u{FF}\u{FE}", "nul\u{0}l", "[1,2", #"{"events": [}"#])
    func notJSONIs400NotJSON(body: String) {
        guard case .failure(let rejection) = decode(body) else { Issue.record("decoded \(body)"); return }
        #expect(rejection.status == 400 && rejection.errcode == "M_NOT_JSON", "\(body): \(rejection)")
    }

    @Test(arguments: ["{}", "[]", "42", "null", #""events""#, #"{"events": {}}"#, #"{"events": "x"}"#, #"{"events": null}"#])
    func jsonThatIsNotATransactionIs400BadJSON(body: String) {
        guard case .failure(let rejection) = decode(body) else { Issue.record("decoded \(body)"); return }
        #expect(rejection.status == 400 && rejection.errcode == "M_BAD_JSON", "\(body): \(rejection)")
    }

    @Test func hostileBodiesFailCleanly() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let deepContent = #"{"events": [{"type": "org.x", "event_id": "$e", "room_id": "!r", "sender": "@a:b", "origin_server_ts": 1, "content": "# + deep + #"}]}"#
        _ = decode(deepContent)  // must not crash; either outcome is acceptable
        let hugeString = #"{"events": [{"type": "m.room.message", "event_id": "$e", "room_id": "!r", "sender": "@a:b", "origin_server_ts": 1, "content": {"msgtype": "m.text", "body": ""# + String(repeating: "a", count: 8 << 20) + #""}}]}"#
        #expect((try? decode(hugeString).get())?.events.count == 1)
        let manyEvents = #"{"events": ["# + Array(repeating: #"{"type": "m.room.message", "event_id": "$e", "room_id": "!r", "sender": "@a:b", "origin_server_ts": 1, "content": {"msgtype": "m.text", "body": "x"}}"#, count: 5000).joined(separator: ",") + "]}"
        #expect((try? decode(manyEvents).get())?.events.count == 5000)
        let wrongTypes = #"{"events": [{"type": 1, "event_id": ["$e"], "room_id": {}, "sender": null, "origin_server_ts": "soon"}, {"type": "m.room.member", "event_id": "$e", "room_id": "!r", "sender": "no", "origin_server_ts": 1.5e300}]}"#
        #expect((try? decode(wrongTypes).get())?.rejectedEvents.count == 2)
    }
}
