import FoundationEssentials
import IsthmusCommon
import Matrix
import Media
import XMPP

/// Joining and leaving a hosted room from XMPP (XEP-0045 §7.2, §7.14, §9.9): the Matrix join first, then the room
/// told to the newcomer and the newcomer to the room; several resources of one user as one occupant.
extension GatewayRoomMachine {

    mutating func xmppPresence(_ presence: Presence) -> [Action] {
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

    mutating func join(_ resource: JID, nick requested: String, history: MUCHistoryRequest?) -> [Action] {
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
            // It gets everything the first one got: the history it asks for is read first.
            if wanted != .last(0), let matrixRoom {
                return [.readHistory(resource: resource, ghost: occupant.ghost, room: matrixRoom, wanted: wanted), .occupantsChanged]
            }
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

    mutating func joined(_ user: JID, _ view: RoomView) -> [Action] {
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

    mutating func joinRefused(_ user: JID, _ error: StanzaError) -> [Action] {
        guard let waiting = pending.removeValue(forKey: user) else { return [] }
        return waiting.resources.keys.sorted { $0.description < $1.description }.map {
            .send(.presence(Presence(type: .error, from: address.occupant(waiting.nick), to: $0, error: error)))
        }
    }

    /// What a resource that joined is told: every occupant, itself last (110), the history, then the subject.
    func welcome(_ resource: JID, _ occupant: Occupant, history: [HistoryMessage], wanted: HistoryWish) -> [Action] {
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
    mutating func leave(_ resource: JID, bounced: Bool = false) -> [Action] {
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


    /// `user` was kicked or banned on the Matrix side: every resource is told (110 with the code), then the others.
    mutating func removed(_ user: JID, code: MUCStatusCode, reason: String?) -> [Action] {
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

    /// The history read for a resource that joined an occupant already in: it is welcomed now (if still in).
    func historyRead(_ resource: JID, _ history: [HistoryMessage], _ wanted: HistoryWish) -> [Action] {
        guard let occupant = occupants[resource.bare], occupant.resources.contains(resource) else { return [] }
        return welcome(resource, occupant, history: history, wanted: wanted)
    }
}
