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

    public internal(set) var matrixRoom: RoomID?
    /// XMPP occupants by bare JID.
    public internal(set) var occupants: [JID: Occupant] = [:]
    /// Joins waiting for the Matrix side, by bare JID: the nick and the resources asking (with their history wishes).
    var pending: [JID: (nick: String, resources: [JID: HistoryWish])] = [:]

    /// How much history a joining resource asked for (XEP-0045 §7.2.15).
    public enum HistoryWish: Sendable, Equatable {
        /// The last messages, at most this many.
        case last(Int)
        /// The messages since then (at most ``maxHistory``).
        case since(Date)
    }
    /// Matrix members (not our occupants' ghosts) and their displaynames.
    var members: [UserID: String?] = [:]
    /// The nick each Matrix member has in the room: given when it joins or renames, kept meanwhile (a nick never moves
    /// from one member to another behind the occupants' backs).
    var nicks: [UserID: String] = [:]
    var topic: String?
    /// The Matrix members typing now, as last told.
    var typing: Set<UserID> = []
    /// Our occupants' ghosts typing now (told to Matrix).
    var xmppTyping: Set<UserID> = []
    /// The occupants were told that the room's encrypted messages do not reach them.
    var toldEncrypted = false
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
        case .historyRead(let resource, let history, let wanted): historyRead(resource, history, wanted)
        }
    }

    // MARK: Helpers

    var pendingGhosts: Set<UserID> { Set(pending.keys.compactMap(ghostOf)) }

    /// Matrix members' nicks.
    public func memberNicks() -> [UserID: String] { nicks }

    /// Gives `user` the first nick free among members and occupants: its displayname (else its localpart), then the
    /// puppets' alternatives (`Name (Matrix)`, numbered).
    mutating func assignNick(_ user: UserID) {
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

    func refuseJoin(_ resource: JID, nick: String, _ condition: StanzaErrorCondition, _ text: String?) -> Action {
        .send(.presence(Presence(type: .error, from: address.occupant(nick), to: resource,
                                 error: StanzaError(type: .cancel, condition: condition, text: text))))
    }

    func occupantPresence(of nick: String, to resource: JID, available: Bool = true, codes: [MUCStatusCode] = []) -> Presence {
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
