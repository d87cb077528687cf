import Bridge
import Testing

/// Bodies cross unchanged; only the emote convention differs between the sides.
@Suite struct MessageTranslationTests {
    @Test(arguments: ["hello", "  spaced  ", "a\nb", "<b>&amp;</b>", "😀", "/meh not an emote", "/me"])
    func plainBodiesCrossUnchanged(_ body: String) {
        #expect(MessageTranslation.toMatrix(body) == OutgoingMatrixMessage(kind: .text, body: body))
        #expect(MessageTranslation.toXMPP(msgtype: "m.text", body: body) == body)
    }

    @Test func emotesMapBothWays() {
        #expect(MessageTranslation.toMatrix("/me waves  ") == OutgoingMatrixMessage(kind: .emote, body: "waves  "))
        #expect(MessageTranslation.toXMPP(msgtype: "m.emote", body: "waves") == "/me waves")
    }

    @Test func noticesGoAsPlainMessages() {
        #expect(MessageTranslation.toXMPP(msgtype: "m.notice", body: "build passed") == "build passed")
    }
}
