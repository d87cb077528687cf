@testable import Bridge
import IsthmusCommon
import IsthmusStore
import Matrix
import Media
import Testing
import XMPP

/// The decisions of the DM path, event by event.
@Suite struct DirectChatRulesTests {
    let linked = RoomID("!linked:localhost")!
    let dm = RoomID("!dm:localhost")!
    let alice = UserID("@alice:localhost")!
    let ghost = UserID("@_xmpp_romeo:localhost")!
    let muc = JID("lounge@conference.localhost")!

    var chat: DirectChat {
        DirectChat(linkedRoom: linked, identity: "romeo@localhost", matrixUser: alice, muc: muc, ghost: ghost, matrixRoom: dm)
    }

    func occupant(_ nick: String, joined: Bool = true) -> RoomGhost {
        RoomGhost(room: linked, user: ghost, nick: nick, occupantID: nil, realJID: JID("romeo@localhost"), joined: joined)
    }

    func message(_ body: String, from sender: UserID? = nil, msgtype: MessageType = .text, details: MessageDetails? = nil) -> MatrixRoomEvent {
        MatrixRoomEvent(eventID: EventID("$e1")!, room: dm, sender: sender ?? alice, content: .message(msgtype: msgtype, body: body, details: details))
    }

    func member(_ user: UserID, _ membership: Membership) -> MatrixRoomEvent {
        MatrixRoomEvent(eventID: EventID("$m1")!, room: dm, sender: user, stateKey: user.rawValue,
                        content: .member(membership: membership, displayname: nil, reason: nil))
    }

    /// A private message to Romeo's occupant under `nick`.
    func sent(_ body: String?, to nick: String = "Romeo", references: MessageReferences = MessageReferences(),
              kind: MessageMapping.Kind = .message, target: EventID? = nil, reaction: ReactionChange? = nil) -> DirectChatRules.MatrixStep {
        .sendPrivate(to: muc.with(resource: nick)!, .init(stanza: OutgoingGroupchat(body: body, references: references), kind: kind,
                                                          target: target, reaction: reaction, excerpt: body))
    }

    @Test func theUsersTextGoesToTheOccupantsCurrentNick() {
        #expect(DirectChatRules.step(for: message("hi <b>"), chat: chat, occupant: occupant("Romeo2")) == sent("hi <b>", to: "Romeo2"))
        #expect(DirectChatRules.step(for: message("waves", msgtype: .emote), chat: chat, occupant: occupant("Romeo")) == sent("/me waves"))
        // Formatted: the HTML is the source, as in linked rooms.
        let formatted = message("bold", details: MessageDetails(html: "<strong>bold</strong>"))
        #expect(DirectChatRules.step(for: formatted, chat: chat, occupant: occupant("Romeo")) == sent("*bold*"))
    }

    @Test func anOccupantWhoLeftGetsANoticeBackNotSilence() {
        #expect(DirectChatRules.step(for: message("there?"), chat: chat, occupant: occupant("Romeo", joined: false))
                == .notice("⚠️ Romeo is not in the XMPP room any more; the message was not delivered."))
        #expect(DirectChatRules.step(for: message("there?"), chat: chat, occupant: nil)
                == .notice("⚠️ This XMPP user is not in the XMPP room any more; the message was not delivered."))
    }

    @Test func theUserLeavingForgetsTheRoomOtherEventsAreIgnored() {
        #expect(DirectChatRules.step(for: member(alice, .leave), chat: chat, occupant: occupant("Romeo")) == .forgetRoom)
        #expect(DirectChatRules.step(for: member(alice, .ban), chat: chat, occupant: occupant("Romeo")) == .forgetRoom)
        #expect(DirectChatRules.step(for: member(alice, .join), chat: chat, occupant: occupant("Romeo")) == .ignore)
        #expect(DirectChatRules.step(for: member(ghost, .leave), chat: chat, occupant: occupant("Romeo")) == .ignore)
        // Someone else's message (an invited third user); an edit of, or a reaction to, a message that was not bridged.
        #expect(DirectChatRules.step(for: message("hi", from: UserID("@mallory:localhost")!), chat: chat, occupant: occupant("Romeo")) == .ignore)
        #expect(DirectChatRules.step(for: message("fixed", details: MessageDetails(replaces: EventID("$e0")!)), chat: chat,
                                     occupant: occupant("Romeo")) == .ignore)
        let reaction = MatrixRoomEvent(eventID: EventID("$r1")!, room: dm, sender: alice, content: .reaction(target: EventID("$e0")!, key: "👍"))
        #expect(DirectChatRules.step(for: reaction, chat: chat, occupant: occupant("Romeo")) == .ignore)
    }

    @Test func aFileGoesAsTheBridgesLinkWithItsCaptionBehindIt() throws {
        let signer = MediaLinkSigner(publicBase: "https://bridge.example/media", secret: "k")
        let attachment = MatrixAttachment(mxc: "mxc://localhost/abc", fileName: "cat.png",
                                          info: MediaInfo(mimeType: "image/png", size: 42, width: 3, height: 2))
        let url = signer.url(for: try #require(MXCURI(mxc: "mxc://localhost/abc")), fileName: "cat.png")
        let plain = message("cat.png", msgtype: .image, details: MessageDetails(media: attachment))
        #expect(DirectChatRules.step(for: plain, chat: chat, occupant: occupant("Romeo"), mediaLinks: signer)
                == .sendFile(to: JID("lounge@conference.localhost/Romeo")!,
                             file: SharedFile(url: url, mediaType: "image/png", name: "cat.png", size: 42, width: 3, height: 2),
                             caption: nil))
        // A caption (body ≠ filename) follows the file, and is its SFS desc too.
        let captioned = message("look at *this*", msgtype: .image, details: MessageDetails(media: attachment))
        guard case .sendFile(_, let file, let caption) = DirectChatRules.step(for: captioned, chat: chat, occupant: occupant("Romeo"),
                                                                             mediaLinks: signer) else {
            Issue.record("not a file")
            return
        }
        #expect(caption == "look at *this*")
        #expect(file.desc == "look at *this*")
        #expect(file.url == url)
        // No media links served: the user hears that it did not go.
        #expect(DirectChatRules.step(for: plain, chat: chat, occupant: occupant("Romeo"), mediaLinks: nil)
                == .notice("⚠️ Only text and files are bridged to XMPP private messages; this message was not delivered."))
        // The occupant left: the notice says so, file or not.
        #expect(DirectChatRules.step(for: plain, chat: chat, occupant: occupant("Romeo", joined: false), mediaLinks: signer)
                == .notice("⚠️ Romeo is not in the XMPP room any more; the message was not delivered."))
    }

    @Test func aBounceNamesTheConditionAndText() {
        #expect(DirectChatRules.bounceNotice(nick: "Romeo", error: StanzaErrorInfo(condition: .itemNotFound, text: "Recipient not in room"))
                == "⚠️ Your message could not be delivered to Romeo (item-not-found: Recipient not in room).")
        #expect(DirectChatRules.bounceNotice(nick: "Romeo", error: StanzaErrorInfo(condition: .notAcceptable))
                == "⚠️ Your message could not be delivered to Romeo (not-acceptable).")
    }
}

extension DirectChatRulesTests {
    @Test func theUsersEncryptedEventsAreAnsweredWhereverTheOccupantIsOthersAreIgnored() {
        let encrypted = MatrixRoomEvent(eventID: EventID("$x")!, room: dm, sender: alice, content: .encrypted)
        let enabled = MatrixRoomEvent(eventID: EventID("$on")!, room: dm, sender: alice, stateKey: "", content: .encryptionEnabled)
        // Told even when the XMPP user is gone: the notice needs the homeserver only.
        #expect(DirectChatRules.step(for: encrypted, chat: chat, occupant: occupant("Romeo")) == .encrypted)
        #expect(DirectChatRules.step(for: encrypted, chat: chat, occupant: nil) == .encrypted)
        #expect(DirectChatRules.step(for: enabled, chat: chat, occupant: occupant("Romeo", joined: false)) == .encrypted)
        let fromGhost = MatrixRoomEvent(eventID: EventID("$g")!, room: dm, sender: ghost, content: .encrypted)
        #expect(DirectChatRules.step(for: fromGhost, chat: chat, occupant: occupant("Romeo")) == .ignore)
    }
}
