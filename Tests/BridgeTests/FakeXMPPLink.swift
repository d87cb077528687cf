import Bridge
import Foundation
import IsthmusCommon
import Synchronization
import TestSupport
import XMPP

/// A scripted XMPP side for portal tests: records every call, lets tests choose join outcomes and feeds the
/// bridge events (including MUC reflections of sent messages) through ``events``.
final class FakeXMPPLink: XMPPLink, Sendable {
    struct Sent: Sendable, Equatable {
        var room: JID
        var from: JID
        var body: String
        var originID: OriginID
        var references = MessageReferences()
    }

    struct State {
        var moderations: [ModerationRequest] = []
        var joins: [(room: JID, nick: String, occupant: JID)] = []
        var leaves: [(room: JID, nick: String, status: String?)] = []
        var nickChanges: [(room: JID, nick: String)] = []
        var sent: [Sent] = []
        /// Every ``setReadingPaused(_:)`` call, in order.
        var readingPaused: [Bool] = []
        /// What the room announces (a room with an archive unless a test says otherwise).
        var roomFeatures = RoomFeatures(stanzaIDs: true, archive: true)
        var privates: [(to: JID, body: String)] = []
        /// MUC private messages from puppets (``sendChat(from:to:body:references:originID:)``), in order, and whether the
        /// sender had joined (a real MUC refuses a private message from a non-occupant).
        var chats: [(from: JID, to: JID, body: String?, originID: OriginID, senderJoined: Bool, references: MessageReferences)] = []
        /// Answers to presence subscription requests, in order.
        var subscriptionAnswers: [(requester: JID, accepted: Bool)] = []
        /// Mediated invitations sent: from which occupant, to whom.
        var invites: [(from: JID, to: JID, reason: String?)] = []
        /// Roles set by the bridge's occupant.
        var roles: [(nick: String, role: MUCRole)] = []
        /// Affiliations set, in order: of whom, to what, asked by whom.
        var affiliations: [(jid: JID, affiliation: MUCAffiliation, actor: JID)] = []
        /// The affiliation the bot's occupant's joins report (nil: none given).
        var botAffiliation: MUCAffiliation?
        /// Affiliation changes asked by these JIDs are refused (`forbidden`).
        var refusedAffiliationActors: Set<JID> = []
        /// The XEP-0363 service ``findUploadService(on:as:)`` finds (nil: none), and the slot requests it got.
        var uploadService: HTTPUpload.Service?
        var slotRequests: [(fileName: String, size: Int64, requester: JID)] = []
        /// The room's affiliation lists, as ``affiliated(room:_:as:)`` answers.
        var affiliationLists: [MUCAffiliation: [JID]] = [:]
        /// Chat states and markers sent, in order.
        var signals: [(from: JID, signals: ChatSignals)] = []
        var takenNicks: Set<String> = []
        var occupantNicks: [JID: String] = [:]
        /// Occupants the room announces when the bridge's bot joins, as a MUC does before the self-presence that
        /// completes a join: fed into the event stream before ``join(room:nick:occupant:)`` returns.
        var presencesOnBotJoin: [RoomPresence] = []
        var archive: [RoomMessage] = []
        var nextStanza = 1
        var reflect = true
        var selfPingResult = SelfPingOutcome.joined
        /// The next this many groupchat sends time out (the server is up but slow).
        var timeoutSends = 0
        /// Subject changes sent, in order.
        var subjects: [(from: JID, subject: String, id: OriginID)] = []
    }

    let state = Mutex(State())
    let events: AsyncStream<XMPPLinkEvent>
    let feed: AsyncStream<XMPPLinkEvent>.Continuation

    init() {
        (events, feed) = AsyncStream.makeStream(of: XMPPLinkEvent.self)
    }

    func roomFeatures(room: JID, as occupant: JID) async throws -> RoomFeatures { state.withLock { $0.roomFeatures } }

    func setReadingPaused(_ paused: Bool) async { state.withLock { $0.readingPaused.append(paused) } }

    func join(room: JID, nick: String, occupant: JID) async throws -> JoinOutcome {
        let (result, announced) = state.withLock { state -> (JoinOutcome, [RoomPresence]) in
            state.joins.append((room, nick, occupant))
            if state.takenNicks.contains(nick) { return (.nickConflict, []) }
            state.occupantNicks[occupant] = nick
            let isBot = occupant == FakeXMPPLink.bot
            return (.joined(.joined(room: room, nick: nick, affiliation: isBot ? state.botAffiliation : nil)),
                    isBot ? state.presencesOnBotJoin.filter { $0.room == room } : [])
        }
        for presence in announced { feed.yield(.presence(presence)) }
        return result
    }

    func leave(room: JID, nick: String, occupant: JID, status: String?) async throws {
        state.withLock { $0.leaves.append((room, nick, status)) }
    }

    func changeNick(room: JID, to nick: String, occupant: JID) async throws -> NickChangeOutcome {
        state.withLock { state in
            state.nickChanges.append((room, nick))
            if state.takenNicks.contains(nick) { return .nickConflict }
            state.occupantNicks[occupant] = nick
            return .changed(.joined(room: room, nick: nick))
        }
    }

    func sendGroupchat(room: JID, from occupant: JID, body: String?, references: MessageReferences, originID: OriginID) async throws {
        let reflection: RoomMessage? = try state.withLock { state in
            if state.timeoutSends > 0 {
                state.timeoutSends -= 1
                throw XMPPLinkError.timeout
            }
            state.sent.append(Sent(room: room, from: occupant, body: body ?? "", originID: originID, references: references))
            guard state.reflect, let nick = state.occupantNicks[occupant] else { return nil }
            let stanzaID = StanzaID("sid-\(state.nextStanza)")!
            state.nextStanza += 1
            var message = RoomMessage(room: room, nick: nick, to: FakeXMPPLink.bot, stanzaID: stanzaID, originID: originID,
                                      id: StanzaAttributeID(originID.rawValue), body: body)
            message.references = references
            state.archive.append(message)
            return message
        }
        if let reflection { feed.yield(.message(reflection)) }
    }

    func setSubject(room: JID, subject: String, from occupant: JID, id: OriginID) async throws {
        state.withLock { $0.subjects.append((occupant, subject, id)) }
    }

    func moderate(room: JID, _ request: ModerationRequest, as occupant: JID) async throws {
        state.withLock { $0.moderations.append(request) }
    }

    func sendPrivate(from sender: JID, to recipient: JID, body: String) async throws {
        state.withLock { $0.privates.append((recipient, body)) }
    }

    func answerSubscription(of requester: JID, accepted: Bool) async throws {
        state.withLock { $0.subscriptionAnswers.append((requester, accepted)) }
    }

    func sendChat(from occupant: JID, to recipient: JID, body: String?, references: MessageReferences, originID: OriginID) async throws {
        state.withLock { $0.chats.append((occupant, recipient, body, originID, $0.occupantNicks[occupant] != nil, references)) }
    }

    func setRole(room: JID, nick: String, role: MUCRole, as occupant: JID) async throws {
        state.withLock { $0.roles.append((nick, role)) }
    }

    func setAffiliation(room: JID, of jid: JID, to affiliation: MUCAffiliation, as actor: JID) async throws {
        try state.withLock { state in
            if state.refusedAffiliationActors.contains(actor) { throw XMPPLinkError.stanzaError(StanzaErrorInfo(condition: .forbidden)) }
            state.affiliations.append((jid, affiliation, actor))
        }
    }

    func affiliated(room: JID, _ affiliation: MUCAffiliation, as occupant: JID) async throws -> [JID] {
        state.withLock { $0.affiliationLists[affiliation] ?? [] }
    }

    func sendInvite(room: JID, from sender: JID, to invitee: JID, reason: String?, id: OriginID) async throws {
        state.withLock { $0.invites.append((sender, invitee, reason)) }
    }

    func sendSignals(room: JID, from occupant: JID, _ signals: ChatSignals) async throws {
        state.withLock { $0.signals.append((occupant, signals)) }
    }

    func selfPing(room: JID, nick: String, occupant: JID) async throws -> SelfPingOutcome {
        state.withLock { $0.selfPingResult }
    }

    func archive(room: JID, as occupant: JID, after: StanzaID?, since: Date?) async throws -> [RoomMessage] {
        state.withLock { state in
            let archive = state.archive.filter { $0.room.bare == room.bare }
            guard let after else { return archive }
            guard let index = archive.firstIndex(where: { $0.stanzaID == after }) else { return archive }
            return Array(archive[(index + 1)...])
        }
    }

    /// A message from a real XMPP occupant, as the component's copy for the bridge's occupant; also archived.
    func occupantSays(_ nick: String, _ body: String, in room: JID, occupantID: String? = nil) -> RoomMessage {
        let message = state.withLock { state in
            let stanzaID = StanzaID("sid-\(state.nextStanza)")!
            state.nextStanza += 1
            let message = RoomMessage(room: room, nick: nick, to: FakeXMPPLink.bot, stanzaID: stanzaID,
                                      occupantID: occupantID.flatMap(OccupantID.init), body: body)
            state.archive.append(message)
            return message
        }
        feed.yield(.message(message))
        return message
    }

    static let bot = JID("isthmus@bridge.localhost/isthmus")!

    func findUploadService(on domain: JID, as asker: JID) async throws -> HTTPUpload.Service? {
        state.withLock { $0.uploadService }
    }

    /// Records the request and refuses it (a slot would need a real HTTP service).
    func requestUploadSlot(on service: JID, fileName: String, size: Int64, contentType: String, as requester: JID) async throws -> HTTPUpload.Slot? {
        state.withLock { $0.slotRequests.append((fileName, size, requester)) }
        return nil
    }

}
