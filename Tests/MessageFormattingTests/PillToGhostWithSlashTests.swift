import IsthmusCommon
import MessageFormatting
import Testing

/// Ghost ids carry the room's XEP-0421 occupant-id, which is base64 and so may hold '/' (found by the rich-message
/// end-to-end test, about every second run). A pill to such a ghost must still become the nick, whether its link is
/// percent-encoded as the matrix.to rules ask or written raw, as Element writes user permalinks.
@Suite struct PillToGhostWithSlashTests {
    static let ghost = UserID("@_xmpp_room=40muc.example.org=23occupant-id=3aab/cd=2bef=3d:example.org")!

    static func nick(_ user: UserID) -> String? { user == ghost ? "Romeo" : nil }

    @Test(arguments: [
        "https://matrix.to/#/%40_xmpp_room%3D40muc.example.org%3D23occupant-id%3D3aab%2Fcd%3D2bef%3D3d%3Aexample.org",
        "https://matrix.to/#/@_xmpp_room=40muc.example.org=23occupant-id=3aab/cd=2bef=3d:example.org",
        "https://matrix.to/#/@_xmpp_room=40muc.example.org=23occupant-id=3aab/cd=2bef=3d:example.org?via=example.org",
    ])
    func pillBecomesTheNick(href: String) {
        let styled = HTMLToStyling.convert("<a href=\"\(href)\">\(Self.ghost.rawValue)</a>, hi", mention: Self.nick)
        #expect(styled == StyledText(body: "Romeo, hi", mentions: [Self.ghost]))
    }
}
