@testable import Bridge
import Foundation
import IsthmusCommon
import Matrix
import Testing

/// Pushed Matrix events reduced to what portals act on: edits, reactions, redactions, replies (RICH.md §2–5, A4).
@Suite struct BridgeAppServiceHandlerRichEventTests {
    let room = RoomID("!room:localhost")!
    let alice = UserID("@alice:localhost")!

    /// A pushed event of `type` with `content` (JSON) and extra top-level fields.
    func event(_ type: String, _ content: String, extra: String = "") throws -> ClientEvent {
        let json = #"{"type": "\#(type)", "event_id": "$ev", "room_id": "!room:localhost", "sender": "@alice:localhost", "#
            + #""origin_server_ts": 1, \#(extra)"content": \#(content)}"#
        return try JSONDecoder().decode(ClientEvent.self, from: Data(json.utf8))
    }

    func reduced(_ content: MatrixRoomEvent.Content) -> MatrixRoomEvent {
        MatrixRoomEvent(eventID: EventID("$ev")!, room: room, sender: alice, content: content)
    }

    @Test func anEditIsItsNewContentWithTheOriginal() throws {
        let edit = try event("m.room.message", #"""
            {"msgtype": "m.text", "body": "* fixed **now**", "format": "org.matrix.custom.html", "formatted_body": "* fixed <b>now</b>",
             "m.new_content": {"msgtype": "m.emote", "body": "fixed **now**", "format": "org.matrix.custom.html",
                               "formatted_body": "fixed <b>now</b>", "m.mentions": {"user_ids": ["@bob:localhost"]}},
             "m.mentions": {"user_ids": ["@carol:localhost"]},
             "m.relates_to": {"rel_type": "m.replace", "event_id": "$orig"}}
            """#)
        #expect(BridgeAppServiceHandler.roomEvent(edit) == reduced(.message(
            msgtype: .emote, body: "fixed **now**",
            details: MessageDetails(html: "fixed <b>now</b>", replaces: EventID("$orig"), mentions: [UserID("@bob:localhost")!]))))
        // New content without HTML: no html, even when the outer event has some; without inner mentions, the outer ones.
        let plain = try event("m.room.message", #"""
            {"msgtype": "m.text", "body": "* x", "format": "org.matrix.custom.html", "formatted_body": "* <i>x</i>",
             "m.new_content": {"msgtype": "m.text", "body": "x"}, "m.mentions": {"user_ids": ["@carol:localhost"]},
             "m.relates_to": {"rel_type": "m.replace", "event_id": "$orig"}}
            """#)
        #expect(BridgeAppServiceHandler.roomEvent(plain) == reduced(.message(
            msgtype: .text, body: "x", details: MessageDetails(replaces: EventID("$orig"), mentions: [UserID("@carol:localhost")!]))))
        // An edit without m.new_content carries nothing to bridge.
        let empty = try event("m.room.message", #"""
            {"msgtype": "m.text", "body": "* x", "m.relates_to": {"rel_type": "m.replace", "event_id": "$orig"}}
            """#)
        #expect(BridgeAppServiceHandler.roomEvent(empty) == nil)
    }

    @Test func aReplyNamesItsTargetAndAThreadFallbackIsNoReply() throws {
        let reply = try event("m.room.message", #"""
            {"msgtype": "m.text", "body": "yes", "m.relates_to": {"m.in_reply_to": {"event_id": "$target"}},
             "m.mentions": {"user_ids": ["@bob:localhost"]}}
            """#)
        #expect(BridgeAppServiceHandler.roomEvent(reply) == reduced(.message(
            msgtype: .text, body: "yes", details: MessageDetails(replyTo: EventID("$target"), mentions: [UserID("@bob:localhost")!]))))
        let thread = try event("m.room.message", #"""
            {"msgtype": "m.text", "body": "in thread", "m.relates_to": {"rel_type": "m.thread", "event_id": "$root",
             "is_falling_back": true, "m.in_reply_to": {"event_id": "$last"}}}
            """#)
        #expect(BridgeAppServiceHandler.roomEvent(thread) == reduced(.message(msgtype: .text, body: "in thread")))
        // A real reply inside a thread is a reply.
        let threadReply = try event("m.room.message", #"""
            {"msgtype": "m.text", "body": "r", "m.relates_to": {"rel_type": "m.thread", "event_id": "$root",
             "is_falling_back": false, "m.in_reply_to": {"event_id": "$answered"}}}
            """#)
        #expect(BridgeAppServiceHandler.roomEvent(threadReply) == reduced(.message(
            msgtype: .text, body: "r", details: MessageDetails(replyTo: EventID("$answered")))))
        // A plain message has no details.
        let plain = try event("m.room.message", #"{"msgtype": "m.text", "body": "hi"}"#)
        #expect(BridgeAppServiceHandler.roomEvent(plain) == reduced(.message(msgtype: .text, body: "hi", details: nil)))
    }

    @Test func aReactionIsItsTargetAndKey() throws {
        let reaction = try event("m.reaction", #"""
            {"m.relates_to": {"rel_type": "m.annotation", "event_id": "$target", "key": "👍"}}
            """#)
        #expect(BridgeAppServiceHandler.roomEvent(reaction) == reduced(.reaction(target: EventID("$target")!, key: "👍")))
        // No key, an empty key or another relation: nothing to bridge.
        for content in [#"{"m.relates_to": {"rel_type": "m.annotation", "event_id": "$target"}}"#,
                        #"{"m.relates_to": {"rel_type": "m.annotation", "event_id": "$target", "key": ""}}"#,
                        #"{"m.relates_to": {"rel_type": "m.reference", "event_id": "$target", "key": "👍"}}"#] {
            #expect(BridgeAppServiceHandler.roomEvent(try event("m.reaction", content)) == nil, "\(content)")
        }
    }

    @Test func aRedactionNamesItsTargetInContentOrAtTheTop() throws {
        // Room version 11+: in the content (Synapse also copies it to the top).
        let v11 = try event("m.room.redaction", #"{"redacts": "$target", "reason": "oops"}"#, extra: #""redacts": "$target", "#)
        #expect(BridgeAppServiceHandler.roomEvent(v11) == reduced(.redaction(target: EventID("$target")!, reason: "oops")))
        // Older rooms: only at the top.
        let old = try event("m.room.redaction", #"{}"#, extra: #""redacts": "$old", "#)
        #expect(BridgeAppServiceHandler.roomEvent(old) == reduced(.redaction(target: EventID("$old")!, reason: nil)))
        // The content wins when both are there.
        let both = try event("m.room.redaction", #"{"redacts": "$inner"}"#, extra: #""redacts": "$outer", "#)
        #expect(BridgeAppServiceHandler.roomEvent(both) == reduced(.redaction(target: EventID("$inner")!, reason: nil)))
        // Neither: nothing to bridge.
        #expect(BridgeAppServiceHandler.roomEvent(try event("m.room.redaction", #"{"reason": "x"}"#)) == nil)
    }
}
