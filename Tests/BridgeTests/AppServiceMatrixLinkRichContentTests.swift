@testable import Bridge
import Foundation
import IsthmusCommon
import Matrix
import Testing

/// The `m.room.message` content the bridge sends for a message, a reply and an edit.
@Suite struct AppServiceMatrixLinkRichContentTests {
    /// The content as the homeserver receives it (JSON object).
    func json(_ message: OutgoingMatrixMessage) throws -> [String: Any] {
        let data = try JSONEncoder().encode(AppServiceMatrixLink.content(message))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func anEditCarriesNewContentAndMentions() throws {
        let bob = UserID("@bob:localhost")!
        let edit = OutgoingMatrixMessage(kind: .text, body: "* fixed *now*", html: "* fixed <strong>now</strong>",
                                         relatesTo: .replacing(EventID("$orig")!), mentions: [bob],
                                         replacement: .init(body: "fixed *now*", html: "fixed <strong>now</strong>", mentions: [bob]))
        let content = try json(edit)
        #expect(content["msgtype"] as? String == "m.text")
        #expect(content["body"] as? String == "* fixed *now*")
        #expect(content["format"] as? String == "org.matrix.custom.html")
        #expect(content["formatted_body"] as? String == "* fixed <strong>now</strong>")
        let relation = try #require(content["m.relates_to"] as? [String: Any])
        #expect(relation["rel_type"] as? String == "m.replace")
        #expect(relation["event_id"] as? String == "$orig")
        #expect((content["m.mentions"] as? [String: Any])?["user_ids"] as? [String] == ["@bob:localhost"])
        let new = try #require(content["m.new_content"] as? [String: Any])
        #expect(new["msgtype"] as? String == "m.text")
        #expect(new["body"] as? String == "fixed *now*")
        #expect(new["format"] as? String == "org.matrix.custom.html")
        #expect(new["formatted_body"] as? String == "fixed <strong>now</strong>")
        #expect((new["m.mentions"] as? [String: Any])?["user_ids"] as? [String] == ["@bob:localhost"])
        #expect(new["m.relates_to"] == nil)
    }

    @Test func anEditWithoutHTMLHasNoFormatAndEmptyMentions() throws {
        let edit = OutgoingMatrixMessage(kind: .emote, body: "* waves", relatesTo: .replacing(EventID("$orig")!),
                                         replacement: .init(body: "waves", html: nil, mentions: []))
        let content = try json(edit)
        #expect(content["format"] == nil)
        #expect(content["formatted_body"] == nil)
        let new = try #require(content["m.new_content"] as? [String: Any])
        #expect(new["msgtype"] as? String == "m.emote")
        #expect(new["format"] == nil)
        #expect(new["formatted_body"] == nil)
        // m.mentions is always sent (empty: nobody is pinged by the edit).
        #expect((new["m.mentions"] as? [String: Any])?["user_ids"] as? [String] == [])
        #expect((content["m.mentions"] as? [String: Any])?["user_ids"] as? [String] == [])
    }

    @Test func aReplyRelatesWithInReplyToAndNoNewContent() throws {
        let reply = OutgoingMatrixMessage(kind: .text, body: "yes", relatesTo: .reply(to: EventID("$target")!),
                                          mentions: [UserID("@alice:localhost")!])
        let content = try json(reply)
        let relation = try #require(content["m.relates_to"] as? [String: Any])
        #expect((relation["m.in_reply_to"] as? [String: Any])?["event_id"] as? String == "$target")
        #expect(relation["rel_type"] == nil)
        #expect(content["m.new_content"] == nil)
        #expect((content["m.mentions"] as? [String: Any])?["user_ids"] as? [String] == ["@alice:localhost"])
    }
}
