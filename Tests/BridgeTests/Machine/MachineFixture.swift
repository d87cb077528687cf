@testable import Bridge
import Foundation
import IsthmusCommon
import IsthmusStore
import Media
import TestSupport
import Testing

/// A portal machine for one link, with helpers that walk it through common sequences. Time is `t0` unless a test
/// moves it; log actions are left out of the action lists compared (``act(_:)``) unless a test asks for them.
struct MachineFixture {
    typealias Action = PortalStateMachine.Action
    typealias Input = PortalStateMachine.Input

    let t0 = ContinuousClock.now
    let room = RoomID("!room:localhost")!
    let muc = JID("lounge@conference.localhost")!
    let naming: BridgeNaming
    let bot = UserID("@isthmus:localhost")!
    let alice = UserID("@alice:localhost")!
    let bob = UserID("@bob:localhost")!
    var machine: PortalStateMachine

    /// `mediaLinks`: signs media links (nil: media messages go as text).
    /// `avatars`: avatars are bridged (the members' avatars are read at activation).
    /// `uploadsMedia`: `media.xmpp_upload` is on.
    /// `relay`: client mode, with the bridge as the account `relay@localhost/isthmus` relaying in this format.
    /// `matrixRelay`: Matrix client mode, the occupants' messages going from the bot's account in this format.
    init(mediaLinks: MediaLinkSigner? = nil, avatars: Bool = false, uploadsMedia: Bool = false, relay: RelayFormat? = nil,
         matrixRelay: MatrixRelayFormat? = nil) {
        let naming = relay == nil ? BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!
            : BridgeNaming(account: JID("relay@localhost/isthmus")!, botNick: "Matrix")!
        self.naming = naming
        machine = PortalStateMachine(configuration: .init(
            room: room, muc: muc, naming: naming, botUserID: bot,
            ghostUserID: { UserID("@_xmpp_\($0.unicodeScalars.filter { ("a"..."z").contains(Character($0)) }.map(String.init).joined()):localhost") },
            isGhost: { $0.localpart.hasPrefix("_xmpp_") }, mediaLinks: mediaLinks, avatars: avatars,
            uploadsMedia: uploadsMedia, relay: relay, matrixRelay: matrixRelay))
    }

    /// Feeds one input; returns the actions without log lines.
    mutating func act(_ input: Input, at now: ContinuousClock.Instant? = nil) -> [Action] {
        machine.receive(input, now: now ?? t0).filter {
            switch $0 {
            case .log, .xmppDelivery(.log), .ghosts(.log), .puppets(.log), .matrixDelivery(.log), .catchUp(.log), .ephemeral(.log), .roles(.log), .roomState(.log), .invites(.log): false
            default: true
            }
        }
    }

    /// Feeds one event.
    mutating func act(_ event: PortalEvent, at now: ContinuousClock.Instant? = nil) -> [Action] {
        act(.event(event), at: now)
    }

    // MARK: Values

    /// The `m.bridge` state the portal sets once active (MSC2346 shape, spelled out).
    var bridgeInfo: BridgeInfoState {
        BridgeInfoState(stateKey: "xmpp://lounge@conference.localhost", content: BridgeInfoContent(
            bridgebot: bot, protocol: .init(id: "xmpp", displayname: "XMPP"),
            network: .init(id: "conference.localhost", displayname: "conference.localhost"),
            channel: .init(id: "lounge@conference.localhost", displayname: "lounge")))
    }

    /// The same state withdrawn (`{}`).
    var bridgeInfoWithdrawn: BridgeInfoState { BridgeInfoState(stateKey: "xmpp://lounge@conference.localhost", content: nil) }

    var botJoin: PortalStateMachine.BotJoin {
        .init(nick: "Matrix", occupant: naming.botOccupant, attempt: 0)
    }

    func snapshot(first: Bool = false, last: StanzaID? = nil, puppets: [Puppet] = [], ghosts: [RoomGhost] = [],
                  undelivered: [MessageMapping] = [], activeSince: Date? = nil) -> PortalStateMachine.RoomSnapshot {
        .init(puppets: puppets, ghosts: ghosts, firstActivation: first, lastStanzaID: last, activeSince: activeSince,
              undelivered: undelivered)
    }

    func puppetJID(_ user: UserID) -> JID { naming.puppetJID(for: user)! }

    func puppetJob(_ user: UserID, _ name: String, attempt: Int = 0, first: Int = 0,
                   then: PortalStateMachine.PuppetFollowUp) -> PortalStateMachine.PuppetJob {
        .init(user: user, displayname: name, occupant: puppetJID(user), firstAttempt: first, attempt: attempt, then: then)
    }

    func puppetJoin(_ user: UserID, _ name: String, attempt: Int = 0, first: Int = 0, change: Bool = false,
                    then: PortalStateMachine.PuppetFollowUp) -> PuppetMachine.Join {
        .init(nick: naming.nick(for: name, attempt: attempt), change: change,
              job: puppetJob(user, name, attempt: attempt, first: first, then: then))
    }

    func puppet(_ user: UserID, _ nick: String, displayname: String? = nil, joined: Bool = true) -> Puppet {
        Puppet(room: room, user: user, occupant: puppetJID(user), nick: nick, displayname: displayname ?? nick, joined: joined)
    }

    func groupchat(_ nick: String, _ body: String, stanzaID: String? = "s1", originID: String? = nil, to: JID? = nil,
                   occupantID: String? = nil, archived: Bool = false) -> RoomMessage {
        RoomMessage(room: muc, nick: nick, to: to ?? naming.botOccupant, stanzaID: stanzaID.flatMap(StanzaID.init),
                    originID: originID.flatMap(OriginID.init), occupantID: occupantID.flatMap(OccupantID.init), body: body,
                    fromArchive: archived)
    }

    func presence(_ nick: String, available: Bool = true, codes: Set<MUCStatusCode> = [], newNick: String? = nil, reason: String? = nil,
                  occupantID: String? = nil) -> RoomPresence {
        RoomPresence(room: muc, nick: nick, to: naming.botOccupant, available: available, occupantID: occupantID.flatMap(OccupantID.init),
                     statusCodes: codes, newNick: newNick, reason: reason)
    }

    func ghost(of nick: String, occupantID: String? = nil) -> UserID {
        machine.configuration.ghostUserID(GhostMachine.identity(muc: muc, nick: nick, occupantID: occupantID.flatMap(OccupantID.init),
                                                                realJID: nil))!
    }

    func text(_ seq: Int64, from sender: UserID? = nil, _ body: String = "hi", msgtype: MessageType = .text) -> QueuedMatrixEvent {
        QueuedMatrixEvent(seq: seq, event: MatrixRoomEvent(eventID: EventID("$e\(seq)")!, room: room, sender: sender ?? alice,
                                                           content: .message(msgtype: msgtype, body: body)))
    }

    /// What a timeline check reports: `events` as the room's timeline, oldest first, read when the inbox was queued
    /// up to `queuedThrough`.
    func timeline(_ events: [QueuedMatrixEvent], queuedThrough: Int64) -> CatchUpMachine.TimelineOrder {
        CatchUpMachine.TimelineOrder(
            positions: Dictionary(uniqueKeysWithValues: events.enumerated().map { ($1.event.eventID, $0) }), queuedThrough: queuedThrough)
    }

    /// What the timeline check reads: `events` as the room's timeline, oldest first (an hour old), read when the
    /// inbox was queued up to `queuedThrough`; all of them seen by the bridge but `unseen`.
    func timelineRead(_ events: [QueuedMatrixEvent], queuedThrough: Int64, unseen: [QueuedMatrixEvent] = []) -> CatchUpMachine.TimelineRead {
        .init(entries: events.map { MatrixTimelineEntry(eventID: $0.event.eventID, timestamp: Date(timeIntervalSince1970: 0), age: .seconds(3600),
                                                        event: $0.event) },
              seen: Set(events.map(\.event.eventID)).subtracting(unseen.map(\.event.eventID)), queuedThrough: queuedThrough,
              now: Date(timeIntervalSince1970: 3600))
    }

    func member(_ seq: Int64, _ user: UserID, _ membership: Membership, name: String? = nil, by sender: UserID? = nil,
                reason: String? = nil) -> QueuedMatrixEvent {
        QueuedMatrixEvent(seq: seq, event: MatrixRoomEvent(eventID: EventID("$m\(seq)")!, room: room, sender: sender ?? user,
                                                           stateKey: user.rawValue,
                                                           content: .member(membership: membership, displayname: name, reason: reason)))
    }

    func outgoing(_ queued: QueuedMatrixEvent, purpose: PortalStateMachine.XMPPDelivery.Purpose? = nil) -> PortalStateMachine.XMPPDelivery {
        guard case .message(let msgtype, let body, _) = queued.event.content else { fatalError("not a message") }
        return .init(user: queued.event.sender, originID: naming.originID(for: queued.event.eventID),
                     body: MessageTranslation.toXMPP(msgtype: msgtype, body: body) ?? body, purpose: purpose ?? .inbox(seq: queued.seq))
    }

    /// The map entry of a plain Matrix message as the machine writes it (with the puppet's nick at the time).
    func mapping(_ queued: QueuedMatrixEvent) -> MessageMapping {
        let delivery = outgoing(queued)
        return MessageMapping(room: room, eventID: queued.event.eventID, stanzaID: nil, originID: delivery.originID,
                              direction: .matrixToXMPP, sender: .matrix(delivery.user), state: .sending, body: delivery.stanza.body,
                              xmppID: StanzaAttributeID(delivery.originID.rawValue), nick: machine.puppets[delivery.user]?.nick,
                              excerpt: delivery.stanza.body)
    }

    /// A run of plain messages mapped in one commit, as the machine asks for it.
    func mapRun(_ run: [QueuedMatrixEvent]) -> Action {
        .xmppDelivery(.insertMappings(run.map { .init(mapping: mapping($0), seq: $0.seq, delivery: outgoing($0)) }))
    }

    /// The store's answer to ``mapRun(_:)``: whether each was new.
    func mapped(_ run: [QueuedMatrixEvent], _ inserted: [Bool]) -> Input {
        .xmppDelivery(.mappingsInserted(run.map { outgoing($0) }, inserted: inserted))
    }

    /// A run of plain messages handed in and mapped, whose first send then timed out: the inbox waits for its retry.
    mutating func runTimedOut(_ run: [QueuedMatrixEvent]) -> [Action] {
        _ = act(.matrixEvents(run))
        _ = act(mapped(run, run.map { _ in true }))
        return act(.xmppDelivery(.groupchatSent(outgoing(run[0]), .timeout)))
    }

    /// The map rows the retry's look for undelivered messages finds for `run`: mapped, not receipted, in order.
    func undelivered(_ run: [QueuedMatrixEvent]) -> [MessageMapping] {
        run.map { queued in
            var row = mapping(queued)
            row.seq = queued.seq
            return row
        }
    }

    // MARK: Sequences

    /// Activation with nothing to catch up: the bot joins both rooms, `members` get puppets, the first drain reads an
    /// empty inbox. Leaves the machine active at t0.
    mutating func activate(members: [UserID: String?] = [:], snapshot: PortalStateMachine.RoomSnapshot? = nil,
                           features: RoomFeatures = RoomFeatures(stanzaIDs: true, archive: true)) {
        _ = act(.activate)
        _ = act(.botJoinedMatrix(error: nil))
        _ = act(.botJoinedMUC(botJoin, .joined(nick: "Matrix", created: false)))
        _ = act(.catchUp(.featuresRead(features)))
        _ = act(.roomLoaded(snapshot ?? self.snapshot(first: true)))
        var next = act(.puppets(.membersFetched(JoinedMembers(displayNames: members))))
        while case .puppets(.join(let join))? = next.last {
            next = act(.puppets(.joinAnswered(join, .joined(nick: join.nick, created: false))))
        }
        if case .loadUndelivered? = next.last { next = act(.undeliveredLoaded([])) }
        #expect(next.last == .catchUp(.readTimeline))
        _ = act(.catchUp(.inboxRead([])))
    }
}

extension JoinOutcome {
    /// The room's answer to a join as `nick` in the fixture's MUC: a self-presence with status 110 (201 when `created`).
    static func joined(nick: String, created: Bool, affiliation: MUCAffiliation? = nil) -> JoinOutcome {
        .joined(.joined(room: JID("lounge@conference.localhost")!, nick: nick, created: created, affiliation: affiliation))
    }
}

extension PortalStateMachine.Action {
    /// The send of `delivery` from its user's puppet, whose occupant JID follows from ``MachineFixture/naming``.
    static func groupchat(_ delivery: PortalStateMachine.XMPPDelivery) -> Self {
        .xmppDelivery(.sendGroupchat(delivery, from: BridgeNaming(componentDomain: "bridge.localhost", botNick: "Matrix")!.puppetJID(for: delivery.user)!))
    }
}
