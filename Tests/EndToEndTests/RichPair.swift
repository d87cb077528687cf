import Foundation
import IsthmusCommon
import Matrix
import TestSupport
import XCTest
import XMLStream
import XMPP

/// One linked pair for the rich-message tests: a running bridge, alice on Matrix (her puppet occupant is
/// "Alice Liddell"), Romeo on XMPP (he created the MUC, so he owns it and is a moderator), and optionally Juliet,
/// a second XMPP occupant.
struct RichPair {
    /// alice's displayname in the room, hence her puppet occupant's nick.
    static let puppetNick = "Alice Liddell"

    /// The test bed, the bridge process and its config.
    let world: EndToEndHarness
    /// The Matrix user, creator of the Matrix room.
    let alice: MatrixTestUser
    /// The MUC, created by Romeo.
    let muc: JID
    /// The linked Matrix room's id.
    let room: String
    /// The MUC's owner, nick "Romeo" (XMPP user bob).
    let romeo: XMPPTestClient
    /// A second XMPP occupant, nick "Juliet" (XMPP user carol), when asked for.
    let juliet: XMPPTestClient?

    /// Starts the bridge and links a fresh room named after `name`.
    /// `config`, when given, rewrites the bridge's config before it starts.
    static func start(_ name: String, withJuliet: Bool = false, config: ((String) -> String)? = nil) async throws -> RichPair {
        let world = try EndToEndHarness(name)
        if let config { try world.editConfig(config) }
        try await world.startBridge()
        let alice = try await world.matrixUser("alice")
        let muc = world.muc(name)
        let romeo = try await world.xmppUser("bob")
        try await romeo.joinRoom(muc, nick: "Romeo")
        var juliet: XMPPTestClient?
        if withJuliet {
            juliet = try await world.xmppUser("carol")
            try await juliet!.joinRoom(muc, nick: "Juliet")
        }
        let room = try await world.linkedRoom(owner: alice, muc: muc)
        try await alice.setDisplayname(puppetNick, in: room)
        return RichPair(world: world, alice: alice, muc: muc, room: room, romeo: romeo, juliet: juliet)
    }

    /// Raises the bridge bot to power level 50 in the Matrix room (unless it has more), as a room admin does who wants
    /// XMPP moderation to remove Matrix users' messages too: only a user with the `redact` level may redact others' events.
    func grantBotModeratorPower() async throws {
        let levels = try await alice.state("m.room.power_levels", in: room) ?? [:]
        let current = ((levels["users"] as? [String: Any])?[world.botUserID] as? NSNumber)?.intValue ?? 0
        if current < 50 { try await alice.grantPower(50, to: world.botUserID, in: room) }
    }

    /// Closes the XMPP clients and stops the bridge (expecting a clean exit).
    func close() {
        romeo.close()
        juliet?.close()
        world.stopBridge()
    }

    // MARK: Matrix → XMPP

    /// alice sends `body`; returns her event id and the message as `client` (default Romeo) received it from her puppet.
    func aliceSays(_ body: String, seenBy client: XMPPTestClient? = nil) async throws -> (eventID: String, seen: Message) {
        let eventID = try await alice.send(body, to: room)
        let seen = try await fromPuppet(body.debugDescription, seenBy: client) { $0.body == body }
        return (eventID, seen)
    }

    /// The next message `client` (default Romeo) receives from alice's puppet that satisfies `matches`.
    func fromPuppet(_ what: String, seenBy client: XMPPTestClient? = nil, timeout: Double = 30,
                    where matches: @escaping @Sendable (Message) -> Bool) async throws -> Message {
        try await (client ?? romeo).nextMessage(from: muc, nick: Self.puppetNick, within: timeout, what, where: matches)
    }

    /// alice sends `sentinel`; returns everything Romeo received from her puppet up to and including it.
    func puppetMessages(untilSentinel sentinel: String, timeout: Double = 30) async throws -> [Message] {
        try await alice.send(sentinel, to: room)
        return try await romeo.messages(from: muc, nick: Self.puppetNick, untilBody: sentinel, within: timeout)
    }

    // MARK: XMPP → Matrix

    /// `client` (default Romeo) sends `body` with `extensions`; returns the room's reflection (with the stanza-id every
    /// occupant sees) and the Matrix event it became.
    func xmppSays(_ body: String?, by client: XMPPTestClient? = nil, extensions: [XElement] = [],
                  matching: (@Sendable (MatrixTestUser.Event) -> Bool)? = nil) async throws -> (reflected: Message, event: MatrixTestUser.Event) {
        let reflected = try await (client ?? romeo).sendAndReflect(to: muc, body: body, extensions: extensions)
        let aliceID = alice.userID
        let event = try await matrixEvent("the event of \(body.debugDescription)") { event in
            event.sender != aliceID && (matching?(event) ?? (event.type == "m.room.message" && event.body == body))
        }
        return (reflected, event)
    }

    /// The stanza-id the room gave `message` (the one every occupant sees).
    func stanzaID(of message: Message) throws -> String {
        try XCTUnwrap(message.stanzaID(by: muc.bare)?.rawValue, "the room gave \(message.body.debugDescription) no stanza-id")
    }

    /// The newest timeline event satisfying `matches`, waiting for it.
    func matrixEvent(_ what: String, timeout: Double = 30,
                     where matches: @escaping @Sendable (MatrixTestUser.Event) -> Bool) async throws -> MatrixTestUser.Event {
        try await eventuallyValue("\(what) in \(room)", timeout: timeout) {
            try await alice.timeline(of: room).last(where: matches)
        }
    }

    /// Romeo sends `sentinel`; returns alice's whole timeline once it is in.
    func timeline(untilXMPPSentinel sentinel: String, by client: XMPPTestClient? = nil,
                  timeout: Double = 30) async throws -> [MatrixTestUser.Event] {
        try (client ?? romeo).sendGroupchat(to: muc, body: sentinel)
        return try await eventuallyValue("\(sentinel.debugDescription) in \(room)", timeout: timeout) {
            let timeline = try await alice.timeline(of: room)
            return timeline.contains { $0.type == "m.room.message" && $0.body == sentinel } ? timeline : nil
        }
    }

    /// The `m.room.message` events of `timeline` sent by ghosts (neither alice nor the bridge bot).
    func ghostMessages(in timeline: [MatrixTestUser.Event]) -> [MatrixTestUser.Event] {
        timeline.filter { $0.type == "m.room.message" && $0.sender != alice.userID && $0.sender != world.botUserID }
    }

    /// Waits until `eventID` is redacted and returns the redaction event (`unsigned.redacted_because`).
    func redaction(of eventID: String, timeout: Double = 30) async throws -> JSONValue {
        try await eventuallyValue("the redaction of \(eventID)", timeout: timeout) {
            try await alice.event(eventID, in: room).at("unsigned", "redacted_because")
        }
    }
}

extension MatrixTestUser.Event {
    /// `content.m.relates_to.rel_type`.
    var relationType: String? { raw.at("content", "m.relates_to", "rel_type")?.stringValue }
    /// `content.m.relates_to.event_id`.
    var relatedEventID: String? { raw.at("content", "m.relates_to", "event_id")?.stringValue }
    /// `content.m.relates_to.key` (reactions).
    var reactionKey: String? { raw.at("content", "m.relates_to", "key")?.stringValue }
    /// Served with `unsigned.redacted_because`.
    var isRedacted: Bool { raw.at("unsigned", "redacted_because") != nil }
}
