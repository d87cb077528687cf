import FoundationEssentials
import IsthmusCommon
import Matrix
import Media
import XMPP

/// One Matrix room as a MUC the component hosts for XMPP users (`gateway.xmpp_rooms`): who is in it on each side, and
/// what each XMPP stanza or Matrix event makes the service say. Pure: it returns ``Action``s; ``GatewayRooms`` performs
/// them and feeds the results back.
///
/// An XMPP user is one occupant whatever its resources (multi-session, XEP-0045 §7.2.16: each resource that joins with
/// the occupant's nick gets everything; one with another nick is refused `conflict`), and one ghost in the Matrix
/// room (the ghost of its bare JID). Matrix members are occupants named by their per-room displaynames, made unique
/// as the bridge's puppets' are (`Name (Matrix)`, then numbered).
public struct GatewayRoomMachine: Sendable {
    /// An XMPP user in the room.
    public struct Occupant: Sendable, Equatable {
        public var nick: String
        public var ghost: UserID
        /// Its resources (full JIDs) that joined.
        public var resources: Set<JID>
    }

    /// The Matrix room as a joining ghost reads it.
    public struct RoomView: Sendable, Equatable {
        public var room: RoomID
        /// Joined members and their per-room displaynames.
        public var members: [UserID: String?]
        public var topic: String?
        /// Recent messages, oldest first.
        public var history: [HistoryMessage]

        public init(room: RoomID, members: [UserID: String?], topic: String?, history: [HistoryMessage]) {
            self.room = room
            self.members = members
            self.topic = topic
            self.history = history
        }
    }

    /// A message of the Matrix timeline replayed on join.
    public struct HistoryMessage: Sendable, Equatable {
        public var event: EventID
        public var sender: UserID
        public var body: String
        public var sent: Date

        public init(event: EventID, sender: UserID, body: String, sent: Date) {
            self.event = event
            self.sender = sender
            self.body = body
            self.sent = sent
        }
    }

    public enum Input: Sendable {
        /// A presence to the room from an XMPP user's resource: a join (available), a leave (unavailable).
        case xmppPresence(Presence)
        /// A groupchat message to the room.
        case xmppMessage(Message)
        /// A XEP-0410 self-ping or a disco#info to the room or an occupant.
        case xmppIQ(IQ)
        /// The ghost of `user` joined the Matrix room, which reads as `view`.
        case joined(user: JID, view: RoomView)
        /// The Matrix room refused the ghost (or could not be reached).
        case joinRefused(user: JID, StanzaError)
        /// The Matrix room took the message (or correction) `message` of `from` as `event`.
        case sent(from: JID, message: Message, event: EventID)
        /// The Matrix room took the reaction `key` of `from`'s ghost on `target` as `event`.
        case reacted(from: JID, target: EventID, key: String, event: EventID)
        /// The Matrix room refused it.
        case sendRefused(from: JID, message: Message, StanzaError)
        /// An event of the Matrix room.
        case matrix(MatrixRoomEvent)
        /// Typing or read receipts in the Matrix room (best effort, not stored).
        case matrixEphemeral(MatrixEphemeral)
        /// `user` wrote `body` (as `event`) in its private room with `ghost`.
        case matrixPrivate(from: UserID, to: UserID, body: String, event: EventID)
    }

    /// What an XMPP occupant's message becomes in the Matrix room.
    public enum MatrixOutgoing: Sendable, Hashable {
        case text(body: String, replyTo: EventID?)
        /// A file the message shares (OOB, SFS, or a link as the whole body): fetched and uploaded, else its link.
        case file(XMPPFileLink, replyTo: EventID?)
        /// A correction (XEP-0308) of the occupant's message `original`.
        case edit(original: EventID, body: String)
        case reaction(target: EventID, key: String)
        /// A retraction (XEP-0424) of the occupant's message, or a reaction taken back (XEP-0444).
        case redaction(EventID)
    }

    /// One sender's reactions to one message.
    struct ReactionSlot: Sendable, Hashable {
        var sender: UserID
        var target: EventID
    }

    public enum Action: Sendable, Equatable {
        case send(Stanza)
        /// The ghost joins the Matrix room behind the alias and reads it (answered with `joined` or `joinRefused`).
        case joinMatrix(user: JID, ghost: UserID, nick: String)
        /// The ghost leaves the Matrix room.
        case leaveMatrix(ghost: UserID, room: RoomID)
        /// The ghost sends `outgoing`, for `message` (answered with `sent`, `reacted` or `sendRefused`; redactions with
        /// nothing).
        case sendMatrix(from: JID, ghost: UserID, room: RoomID, message: Message, outgoing: MatrixOutgoing)
        /// The ghost writes to `user` in their private Matrix room (opened first when there is none); answered with
        /// `sendRefused` when that fails.
        case sendDirect(from: JID, ghost: UserID, to: UserID, message: Message)
        /// The ghost types or stops (XEP-0085 from its occupant).
        case typing(ghost: UserID, room: RoomID, Bool)
        /// The ghost has read up to `event` (XEP-0333 `displayed` from its occupant).
        case readReceipt(ghost: UserID, room: RoomID, event: EventID)
        /// Occupants changed (to persist).
        case occupantsChanged
    }

    public let address: GatewayRoomAddress
    let naming: BridgeNaming
    /// The bridge's Matrix user (never an occupant).
    let bot: UserID
    let ghostOf: @Sendable (JID) -> UserID?
    /// Whether a Matrix user is one of the bridge's ghosts.
    let isGhost: @Sendable (UserID) -> Bool
    /// Signs the bridge's links to Matrix files (nil: Matrix files arrive as their names).
    let mediaLinks: MediaLinkSigner?
    /// How many history messages a join gets when it does not say (`<history maxstanzas>`), and at most.
    let defaultHistory: Int
    let maxHistory: Int

    public private(set) var matrixRoom: RoomID?
    /// XMPP occupants by bare JID.
    public private(set) var occupants: [JID: Occupant] = [:]
    /// Joins waiting for the Matrix side, by bare JID: the nick and the resources asking (with their history wishes).
    private(set) var pending: [JID: (nick: String, resources: [JID: HistoryWish])] = [:]

    /// How much history a joining resource asked for (XEP-0045 §7.2.15).
    enum HistoryWish: Sendable, Equatable {
        /// The last messages, at most this many.
        case last(Int)
        /// The messages since then (at most ``maxHistory``).
        case since(Date)
    }
    /// Matrix members (not our occupants' ghosts) and their displaynames.
    private(set) var members: [UserID: String?] = [:]
    /// The nick each Matrix member has in the room: given when it joins or renames, kept meanwhile (a nick never moves
    /// from one member to another behind the occupants' backs).
    private(set) var nicks: [UserID: String] = [:]
    private(set) var topic: String?
    /// The Matrix members typing now, as last told.
    var typing: Set<UserID> = []
    /// Our occupants' ghosts typing now (told to Matrix).
    var xmppTyping: Set<UserID> = []
    /// The reactions in the room as they stand (since this process knew the room): per sender and message, each key
    /// and its reaction event. XEP-0444 sends a sender's whole set; Matrix one key per event.
    var reactions: [ReactionSlot: [String: EventID]] = [:]
    /// Which slot and key each reaction event is, to take it back when it is redacted.
    var reactionEvents: [EventID: (slot: ReactionSlot, key: String)] = [:]
    /// The events of the last messages XMPP occupants sent, by `bare JID + " " + id` for each id they may correct or
    /// retract one with (its `id` attribute and its origin-id); at most ``maxRememberedMessages``.
    var sentEvents: [String: EventID] = [:]
    var sentOrder: [String] = []
    static let maxRememberedMessages = 2000
    /// How many reactions a room keeps track of.
    static let maxRememberedReactions = 20_000

    public init(address: GatewayRoomAddress, naming: BridgeNaming, bot: UserID, ghostOf: @escaping @Sendable (JID) -> UserID?,
                isGhost: @escaping @Sendable (UserID) -> Bool = { _ in false },
                mediaLinks: MediaLinkSigner? = nil, defaultHistory: Int = 20, maxHistory: Int = 100) {
        self.isGhost = isGhost
        self.address = address
        self.mediaLinks = mediaLinks
        self.naming = naming
        self.bot = bot
        self.ghostOf = ghostOf
        self.defaultHistory = defaultHistory
        self.maxHistory = maxHistory
    }

    /// Occupants restored from the store after a restart (their ghosts are still in the Matrix room).
    public mutating func restore(room: RoomID, occupants restored: [JID: Occupant], members: [UserID: String?], topic: String?) {
        matrixRoom = room
        occupants = restored
        self.members = members.filter { user, _ in !restored.values.contains { $0.ghost == user } && user != bot }
        nicks = [:]
        for user in self.members.keys.sorted(by: { $0.rawValue < $1.rawValue }) { assignNick(user) }
        self.topic = topic
    }

    public var isEmpty: Bool { occupants.isEmpty && pending.isEmpty }

    /// Whether `user` is in the room or on its way in (a presence from it is then no new join).
    public func knows(_ user: JID) -> Bool { occupants[user.bare] != nil || pending[user.bare] != nil }

    public mutating func handle(_ input: Input) -> [Action] {
        switch input {
        case .xmppPresence(let presence): xmppPresence(presence)
        case .xmppMessage(let message): xmppMessage(message)
        case .xmppIQ(let iq): xmppIQ(iq)
        case .joined(let user, let view): joined(user.bare, view)
        case .joinRefused(let user, let error): joinRefused(user.bare, error)
        case .sent(let from, let message, let event): sent(from, message, event)
        case .reacted(let from, let target, let key, let event): reacted(from, target, key, event)
        case .sendRefused(let from, let message, let error): [.send(.message(errorReply(to: message, from: from, error)))]
        case .matrix(let event): matrix(event)
        case .matrixEphemeral(let ephemeral): matrixEphemeral(ephemeral)
        case .matrixPrivate(let user, let ghost, let body, let event): matrixPrivate(from: user, to: ghost, body: body, event: event)
        }
    }

    // MARK: XMPP

    private mutating func xmppPresence(_ presence: Presence) -> [Action] {
        guard let from = presence.from, from.resource != nil, let nick = presence.to?.resource else {
            // A presence to the room's bare JID has no nick to join with (XEP-0045 §7.2.1 needs one).
            guard presence.type == .available, let from = presence.from else { return [] }
            return [.send(.presence(Presence(type: .error, from: address.jid, to: from,
                                             error: StanzaError(type: .modify, condition: .jidMalformed, text: "Join with a nick: room/nick"))))]
        }
        switch presence.type {
        case .available:
            return join(from, nick: nick, history: presence.mucJoin?.history)
        case .unavailable:
            return leave(from)
        case .error:
            return leave(from, bounced: true)
        default:
            return []
        }
    }

    private mutating func join(_ resource: JID, nick requested: String, history: MUCHistoryRequest?) -> [Action] {
        let user = resource.bare
        let nick = requested
        let wanted: HistoryWish = switch history {
        case .none?: .last(0)
        case .maxStanzas(let count)?: .last(min(count, maxHistory))
        case .since(let date)?: .since(date)
        case nil: .last(defaultHistory)
        }
        if var occupant = occupants[user] {
            // Another resource of an occupant, or a presence update of one already in.
            guard occupant.nick == nick else { return [refuseJoin(resource, nick: nick, .conflict, "You are in this room as \(occupant.nick)")] }
            if occupant.resources.contains(resource) { return [] }
            occupant.resources.insert(resource)
            occupants[user] = occupant
            return welcome(resource, occupant, history: [], wanted: .last(0)) + [.occupantsChanged]
        }
        if var waiting = pending[user] {
            guard waiting.nick == nick else { return [refuseJoin(resource, nick: nick, .conflict, nil)] }
            waiting.resources[resource] = wanted
            pending[user] = waiting
            return []
        }
        if nickTaken(nick, by: user) { return [refuseJoin(resource, nick: nick, .conflict, "That nick is taken in this room")] }
        guard let ghost = ghostOf(user) else { return [refuseJoin(resource, nick: nick, .notAllowed, nil)] }
        pending[user] = (nick, [resource: wanted])
        return [.joinMatrix(user: user, ghost: ghost, nick: nick)]
    }

    private mutating func joined(_ user: JID, _ view: RoomView) -> [Action] {
        guard let waiting = pending.removeValue(forKey: user), let ghost = ghostOf(user) else { return [] }
        matrixRoom = view.room
        topic = view.topic
        let ours = Set(occupants.values.map(\.ghost)).union(pendingGhosts).union([ghost, bot])
        members = view.members.filter { !ours.contains($0.key) }
        // Members who left meanwhile lose their nicks; those who came get one (the others keep theirs).
        nicks = nicks.filter { members[$0.key] != nil }
        for user in members.keys.sorted(by: { $0.rawValue < $1.rawValue }) where nicks[user] == nil { assignNick(user) }
        // The first to join learns the Matrix members only now: a nick one of them has is refused, and the ghost
        // leaves again (a Matrix member keeps its nick).
        if nickTaken(waiting.nick, by: user) {
            let error = StanzaError(type: .cancel, condition: .conflict, text: "That nick is taken in this room")
            return waiting.resources.keys.sorted { $0.description < $1.description }.map {
                .send(.presence(Presence(type: .error, from: address.occupant(waiting.nick), to: $0, error: error)))
            } + [.leaveMatrix(ghost: ghost, room: view.room)]
        }
        let occupant = Occupant(nick: waiting.nick, ghost: ghost, resources: Set(waiting.resources.keys))
        var actions: [Action] = []
        // The others see the newcomer first (XEP-0045 §7.2.3), then the newcomer gets the room.
        for other in occupants.values {
            for resource in other.resources { actions.append(.send(.presence(occupantPresence(of: occupant.nick, to: resource)))) }
        }
        occupants[user] = occupant
        for (resource, wanted) in waiting.resources.sorted(by: { $0.key.description < $1.key.description }) {
            actions += welcome(resource, occupant, history: view.history, wanted: wanted)
        }
        return actions + [.occupantsChanged]
    }

    private mutating func joinRefused(_ user: JID, _ error: StanzaError) -> [Action] {
        guard let waiting = pending.removeValue(forKey: user) else { return [] }
        return waiting.resources.keys.sorted { $0.description < $1.description }.map {
            .send(.presence(Presence(type: .error, from: address.occupant(waiting.nick), to: $0, error: error)))
        }
    }

    /// What a resource that joined is told: every occupant, itself last (110), the history, then the subject.
    private func welcome(_ resource: JID, _ occupant: Occupant, history: [HistoryMessage], wanted: HistoryWish) -> [Action] {
        var actions: [Action] = []
        for (_, nick) in nicks.sorted(by: { $0.value < $1.value }) {
            actions.append(.send(.presence(occupantPresence(of: nick, to: resource))))
        }
        for other in occupants.values where other.ghost != occupant.ghost {
            actions.append(.send(.presence(occupantPresence(of: other.nick, to: resource))))
        }
        actions.append(.send(.presence(occupantPresence(of: occupant.nick, to: resource, codes: [.selfPresence, .roomLogged]))))
        let replayed = switch wanted {
        case .last(let count): history.suffix(count)
        case .since(let date): history.filter { $0.sent > date }.suffix(maxHistory)
        }
        for message in replayed {
            let nick = senderNick(message.sender)
            actions.append(.send(.message(groupchat(message.body, from: nick, to: resource, event: message.event,
                                                   delay: Delay(stamp: message.sent, from: address.jid)))))
        }
        actions.append(.send(.message(Message(type: .groupchat, from: address.jid, to: resource, subject: topic ?? ""))))
        return actions
    }

    /// A resource leaves; `bounced`: its server returned an error for it (it is gone: XEP-0045 §9.9's 333, with no
    /// self-presence to a resource that cannot get it).
    private mutating func leave(_ resource: JID, bounced: Bool = false) -> [Action] {
        let user = resource.bare
        if var waiting = pending[user] {
            waiting.resources[resource] = nil
            pending[user] = waiting.resources.isEmpty ? nil : waiting
            return []
        }
        guard var occupant = occupants[user], occupant.resources.contains(resource) else { return [] }
        var actions: [Action] = bounced ? []
            : [.send(.presence(occupantPresence(of: occupant.nick, to: resource, available: false, codes: [.selfPresence])))]
        occupant.resources.remove(resource)
        if !occupant.resources.isEmpty {
            occupants[user] = occupant
            return actions + [.occupantsChanged]
        }
        occupants[user] = nil
        for other in occupants.values {
            for each in other.resources {
                actions.append(.send(.presence(occupantPresence(of: occupant.nick, to: each, available: false, codes: bounced ? [.removedAfterError] : []))))
            }
        }
        if let matrixRoom { actions.append(.leaveMatrix(ghost: occupant.ghost, room: matrixRoom)) }
        return actions + [.occupantsChanged]
    }

    private mutating func xmppMessage(_ message: Message) -> [Action] {
        guard let from = message.from else { return [] }
        guard message.type == .groupchat else {
            // An error from an occupant's resource: what we sent it bounced, it is gone.
            return message.type == .error ? leave(from, bounced: true) : privateMessage(message, from: from)
        }
        guard let occupant = occupants[from.bare], occupant.resources.contains(from), let matrixRoom else {
            return [.send(.message(errorReply(to: message, from: from, StanzaError(type: .modify, condition: .notAcceptable,
                                                                                   text: "Join the room first"))))]
        }
        return signals(message, ghost: occupant.ghost, room: matrixRoom) + outgoing(message, from: from, ghost: occupant.ghost, room: matrixRoom)
    }

    private mutating func sent(_ from: JID, _ message: Message, _ event: EventID) -> [Action] {
        guard let occupant = occupants[from.bare], let body = message.body else { return [] }
        if message.references.replaces == nil {
            // Its ids, and its stanza-id (the event id), by which the occupant may correct or retract it.
            for id in [message.id?.rawValue, message.originID?.rawValue, event.rawValue].compactMap({ $0 }) {
                remember(from.bare, id: id, event: event)
            }
        }
        // Every resource of every occupant gets it, the sender's own as its reflection (with the ids it sent).
        var actions: [Action] = []
        for other in occupants.values {
            for resource in other.resources {
                var reflected = groupchat(body, from: occupant.nick, to: resource, event: event)
                reflected.id = message.id
                reflected.originID = message.originID
                reflected.extensions = message.extensions
                actions.append(.send(.message(reflected)))
            }
        }
        return actions
    }

    private func xmppIQ(_ iq: IQ) -> [Action] {
        guard iq.isRequest, let from = iq.from else { return [] }
        switch (iq.type, iq.payload, iq.to?.resource) {
        case (.get, .ping?, let nick?):
            // XEP-0410: a self-ping answers whether the asker is still in under that nick.
            if let occupant = occupants[from.bare], occupant.nick == nick, occupant.resources.contains(from) { return [.send(.iq(iq.result()))] }
            return [.send(.iq(iq.errorResponse(StanzaError(type: .modify, condition: .notAcceptable))))]
        case (.get, .discoInfo?, nil):
            return [.send(.iq(iq.result(payload: .discoInfo(roomInfo))))]
        default:
            return [.send(.iq(iq.errorResponse(StanzaError(type: .cancel, condition: .serviceUnavailable))))]
        }
    }

    /// disco#info of the room (XEP-0045 §6.4).
    var roomInfo: DiscoInfo {
        DiscoInfo(identities: [.init(category: "conference", type: "text", name: address.alias.rawValue)],
                  features: [XMPPNamespace.discoInfo, XMPPNamespace.muc, XMPPNamespace.stanzaID, XMPPNamespace.mam,
                             XMPPNamespace.mam + "#extended", "muc_public", "muc_open",
                             "muc_semianonymous", "muc_persistent", "muc_unmoderated", "muc_unsecured"])
    }

    // MARK: Matrix

    private mutating func matrix(_ event: MatrixRoomEvent) -> [Action] {
        guard event.room == matrixRoom else { return [] }
        let ours = Set(occupants.values.map(\.ghost)).union(pendingGhosts).union([bot])
        switch event.content {
        case .message(let msgtype, let body, let details):
            // Our occupants' own messages were reflected when the homeserver took them.
            guard !ours.contains(event.sender) else { return [] }
            return matrixMessage(event, body: msgtype == .emote ? "/me " + body : body, details: details)
        case .reaction(let target, let key):
            guard !ours.contains(event.sender) else { return [] }
            return matrixReaction(event, target: target, key: key)
        case .redaction(let target, _):
            guard !ours.contains(event.sender) else { return [] }
            return matrixRedaction(event, target: target)
        case .member(let membership, let displayname, let reason):
            guard let subject = event.stateKey.flatMap(UserID.init) else { return [] }
            if let user = occupants.first(where: { $0.value.ghost == subject })?.key {
                // Someone on Matrix removed one of our occupants: a kick (307) or a ban (301) in the MUC.
                guard event.sender != subject, membership == .leave || membership == .ban else { return [] }
                return removed(user, code: membership == .ban ? .banned : .kicked, reason: reason)
            }
            guard !ours.contains(subject) else { return [] }
            let before = nicks[subject]
            if membership == .join {
                let renamed = members[subject].map { $0 != displayname } ?? true
                members[subject] = displayname
                if renamed {
                    nicks[subject] = nil
                    assignNick(subject)
                }
            } else {
                members[subject] = nil
                nicks[subject] = nil
            }
            let after = nicks[subject]
            guard before != after else { return [] }
            var actions: [Action] = []
            if let before { actions += broadcast { .presence(occupantPresence(of: before, to: $0, available: false)) } }
            if let after { actions += broadcast { .presence(occupantPresence(of: after, to: $0)) } }
            return actions
        case .topic(let text):
            topic = text
            return broadcast { .message(Message(type: .groupchat, from: address.jid, to: $0, subject: text)) }
        default:
            return []
        }
    }

    /// `user` was kicked or banned on the Matrix side: every resource is told (110 with the code), then the others.
    private mutating func removed(_ user: JID, code: MUCStatusCode, reason: String?) -> [Action] {
        guard let occupant = occupants.removeValue(forKey: user) else { return [] }
        var actions: [Action] = []
        for resource in occupant.resources.sorted(by: { $0.description < $1.description }) {
            var presence = occupantPresence(of: occupant.nick, to: resource, available: false, codes: [.selfPresence, code])
            presence.mucUser?.items[0].reason = reason
            actions.append(.send(.presence(presence)))
        }
        actions += broadcast { .presence(occupantPresence(of: occupant.nick, to: $0, available: false, codes: [code])) }
        return actions + [.occupantsChanged]
    }

    // MARK: Helpers

    var pendingGhosts: Set<UserID> { Set(pending.keys.compactMap(ghostOf)) }

    /// Matrix members' nicks.
    public func memberNicks() -> [UserID: String] { nicks }

    /// Gives `user` the first nick free among members and occupants: its displayname (else its localpart), then the
    /// puppets' alternatives (`Name (Matrix)`, numbered).
    private mutating func assignNick(_ user: UserID) {
        let taken = Set(nicks.values.map { $0.lowercased() }).union(occupants.values.map { $0.nick.lowercased() })
            .union(pending.values.map { $0.nick.lowercased() })
        let name = (members[user] ?? nil).flatMap { $0.isEmpty ? nil : $0 } ?? user.localpart
        var attempt = 0
        var nick = naming.nick(for: name, attempt: attempt)
        while taken.contains(nick.lowercased()) {
            attempt += 1
            nick = naming.nick(for: name, attempt: attempt)
        }
        nicks[user] = nick
    }

    /// What a sender is called in the room: its nick, else an occupant's, else (someone gone) a neutral name for one
    /// of our ghosts (its id spells an XMPP address, which this semi-anonymous room does not show) or the localpart.
    func senderNick(_ sender: UserID) -> String {
        nicks[sender] ?? occupants.values.first { $0.ghost == sender }?.nick ?? (isGhost(sender) ? "XMPP user" : sender.localpart)
    }

    func nickTaken(_ nick: String, by user: JID) -> Bool {
        let folded = nick.lowercased()
        if occupants.contains(where: { $0.key != user && $0.value.nick.lowercased() == folded }) { return true }
        if pending.contains(where: { $0.key != user && $0.value.nick.lowercased() == folded }) { return true }
        // Matrix members' nicks as they are now (a Matrix member keeps its nick; the XMPP user picks another).
        return nicks.values.contains { $0.lowercased() == folded }
    }

    func broadcast(_ stanza: (JID) -> Stanza) -> [Action] {
        occupants.values.flatMap(\.resources).sorted { $0.description < $1.description }.map { .send(stanza($0)) }
    }

    private func refuseJoin(_ resource: JID, nick: String, _ condition: StanzaErrorCondition, _ text: String?) -> Action {
        .send(.presence(Presence(type: .error, from: address.occupant(nick), to: resource,
                                 error: StanzaError(type: .cancel, condition: condition, text: text))))
    }

    private func occupantPresence(of nick: String, to resource: JID, available: Bool = true, codes: [MUCStatusCode] = []) -> Presence {
        Presence(type: available ? .available : .unavailable, from: address.occupant(nick), to: resource,
                 mucUser: MUCUser(items: [MUCItem(affiliation: MUCAffiliation.none, role: available ? .participant : MUCRole.none)], statusCodes: codes))
    }

    /// A message of the room: its stanza-id and (for what came from Matrix) its `id` are the event id, which replies,
    /// reactions, retractions and corrections then name.
    func groupchat(_ body: String?, from nick: String, to resource: JID, event: EventID?, delay: Delay? = nil,
                   references: MessageReferences? = nil) -> Message {
        Message(type: .groupchat, from: address.occupant(nick), to: resource, id: event.flatMap { StanzaAttributeID($0.rawValue) },
                body: body, delay: delay,
                stanzaIDs: event.flatMap { StanzaID($0.rawValue) }.map { [AssignedStanzaID(id: $0, by: address.jid)] } ?? [],
                extensions: references?.elements ?? [])
    }

    func errorReply(to message: Message, from: JID, _ error: StanzaError) -> Message {
        Message(type: .error, from: message.to ?? address.jid, to: from, id: message.id, error: error)
    }
}
