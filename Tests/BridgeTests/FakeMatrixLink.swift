import Bridge
import Foundation
import IsthmusCommon
import MatrixClient
import Synchronization

/// A scripted Matrix side for portal tests: records calls and hands out event ids; idempotent per txnId like Synapse.
final class FakeMatrixLink: MatrixLink, Sendable {
    struct Sent: Sendable, Equatable {
        var room: RoomID
        var user: UserID
        var message: OutgoingMatrixMessage
        var txnID: ClientTransactionID
        var eventID: EventID
        var timestamp: Date?
    }

    struct Reaction: Sendable, Equatable {
        var room: RoomID
        var user: UserID
        var target: EventID
        var key: String
        var eventID: EventID
    }

    struct Redaction: Sendable, Equatable {
        var room: RoomID
        var user: UserID
        var event: EventID
        var reason: String?
    }

    struct State {
        var reactions: [Reaction] = []
        var redactions: [Redaction] = []
        var members: [RoomID: [UserID: String?]] = [:]
        var sent: [Sent] = []
        /// Every message send made, including those a transaction id answered with the event it made before.
        var sendCalls = 0
        var byTxn: [String: EventID] = [:]
        var registered: Set<UserID> = []
        var globalNames: [UserID: String] = [:]
        var roomNames: [UserID: String] = [:]
        var leaves: [(RoomID, UserID)] = []
        /// Users the homeserver holds for not in the room (made to leave behind the bridge's back): their sends are
        /// refused with ``MatrixLinkError/notInRoom(_:)`` until they join.
        var outOfRoom: Set<UserID> = []
        var removals: [(UserID, Bool, String?)] = []
        var nextEvent = 1
        /// The next this many sends fail as if the homeserver were down.
        var unavailableSends = 0
        /// Sends the homeserver stores (in `sent` and the room's timeline) but never answers, forgetting every
        /// transaction id as it restarts (Synapse keeps an appservice user's in memory).
        var storedButUnansweredSends = 0
        /// Sends in these rooms hang until the sending task is cancelled (a homeserver that stopped answering, cut short
        /// by shutdown); `heldSends` counts those that started.
        var hangingSendRooms: Set<RoomID> = []
        var heldSends = 0
        /// What `/messages` shows per room, oldest first (tests put events here that the homeserver "stored").
        var timelines: [RoomID: [MatrixTimelineEntry]] = [:]
        var timelineReads = 0
        /// Bridge-info state as set by the bot, by room and state key (nil content: withdrawn).
        var bridgeInfo: [RoomID: [String: BridgeInfoContent?]] = [:]
        /// Bridge-info state is refused as the homeserver refuses a user without the power (403 `M_FORBIDDEN`).
        var bridgeInfoRefused = false
        /// Rooms whose sends are refused as Synapse refuses a user who is not in the room (403 `M_FORBIDDEN`).
        var forbiddenSendRooms: Set<RoomID> = []
        /// Topics set, in order, with who set them.
        var topics: [(room: RoomID, text: String, user: UserID)] = []
        /// Users whose topic changes are refused (no power).
        var topicRefused: Set<UserID> = []
        var roomNamesSet: [(room: RoomID, name: String)] = []
        /// The predecessor each room's `m.room.create` names.
        var predecessors: [RoomID: RoomID] = [:]
        /// The bot's invitations: who, where, with which reason.
        var invites: [(room: RoomID, user: UserID, reason: String?)] = []
        /// Each room's power state (the default: the bot at 100 in a room version 10 room with no one else listed).
        var powerStates: [RoomID: RoomPowerState] = [:]
        /// Every `m.room.power_levels` content the bot sent, in order.
        var powerLevelWrites: [(RoomID, JSONValue)] = []
        /// Typing notices (user, on/off) and read receipts (user, event), in order.
        var typing: [(UserID, Bool)] = []
        var receipts: [(UserID, EventID)] = []
    }

    let state = Mutex(State())
    let botUserID = UserID("@isthmus:localhost")!

    func ghostUserID(forIdentity identity: String) -> UserID? {
        let encoded = identity.unicodeScalars.map { scalar -> String in
            let character = Character(scalar)
            if ("a"..."z").contains(character) || ("0"..."9").contains(character) { return String(character) }
            return "=" + String(scalar.value, radix: 16)
        }.joined()
        return UserID("@_xmpp_\(encoded):localhost")
    }

    func isGhost(_ user: UserID) -> Bool { user.localpart.hasPrefix("_xmpp_") }

    func registerGhost(_ ghost: UserID) async throws { state.withLock { _ = $0.registered.insert(ghost) } }

    func setDisplayname(_ name: String, for user: UserID) async throws { state.withLock { $0.globalNames[user] = name } }

    func invite(_ user: UserID, to room: RoomID, reason: String?) async throws {
        state.withLock { $0.invites.append((room, user, reason)) }
    }

    func roomPowerState(_ room: RoomID) async throws -> RoomPowerState {
        let bot = botUserID
        return state.withLock { state in
            state.powerStates[room] ?? RoomPowerState(roomVersion: "10", creators: [bot],
                                                      powerLevels: .object(["users": .object([bot.rawValue: .integer(100)])]))
        }
    }

    func setPowerLevels(_ content: JSONValue, in room: RoomID) async throws {
        let bot = botUserID
        state.withLock { state in
            state.powerLevelWrites.append((room, content))
            var power = state.powerStates[room] ?? RoomPowerState(roomVersion: "10", creators: [bot], powerLevels: nil)
            power.powerLevels = content
            state.powerStates[room] = power
        }
    }

    func join(_ room: RoomID, as user: UserID) async throws {
        state.withLock { state in
            if state.members[room]?[user] == nil { state.members[room, default: [:]][user] = .some(nil) }
            state.outOfRoom.remove(user)
        }
    }

    func leave(_ room: RoomID, as user: UserID, reason: String?) async throws {
        state.withLock { state in
            state.members[room]?[user] = nil
            state.leaves.append((room, user))
        }
    }

    func remove(_ user: UserID, from room: RoomID, ban: Bool, reason: String?) async throws {
        state.withLock { state in
            state.members[room]?[user] = nil
            state.removals.append((user, ban, reason))
        }
    }

    func setBridgeInfo(_ info: BridgeInfoState, in room: RoomID) async throws {
        if state.withLock({ $0.bridgeInfoRefused }) {
            throw MatrixError(kind: .homeserver, call: .sendState, endpoint: "PUT …/state/m.bridge", status: 403, errcode: .forbidden,
                              message: "You don't have permission to post that to the room.", attempts: 1)
        }
        state.withLock { $0.bridgeInfo[room, default: [:]][info.stateKey] = .some(info.content) }
    }

    func setRoomDisplayname(_ name: String, for user: UserID, in room: RoomID) async throws {
        state.withLock { $0.roomNames[user] = name; $0.members[room, default: [:]][user] = .some(name) }
    }

    func membership(of user: UserID, in room: RoomID, as viewer: UserID) async throws -> Membership? {
        state.withLock { $0.members[room]?[user] != nil ? .join : nil }
    }

    func createDirectRoom(as creator: UserID, inviting user: UserID) async throws -> RoomID {
        state.withLock { state in
            let room = RoomID("!dm\(state.nextEvent):localhost")!
            state.nextEvent += 1
            state.members[room, default: [:]][creator] = .some(nil)
            state.members[room, default: [:]][user] = .some(nil)   // as if the invite was accepted at once
            return room
        }
    }

    /// The fake encrypts nothing: files go as they are.
    func encryptsFiles(in room: RoomID, as user: UserID) async throws -> Bool { false }

    func send(_ message: OutgoingMatrixMessage, as user: UserID, in room: RoomID, txnID: ClientTransactionID,
              timestamp: Date?) async throws -> EventID {
        let hangs = state.withLock { state in
            guard state.hangingSendRooms.contains(room) else { return false }
            state.heldSends += 1
            return true
        }
        // Ends only by cancellation (then throws CancellationError), as a call to a homeserver that never answers.
        if hangs { try await Task.sleep(for: .seconds(86_400)) }
        return try state.withLock { state in
            state.sendCalls += 1
            if state.unavailableSends > 0 {
                state.unavailableSends -= 1
                throw MatrixLinkError.unavailable("homeserver down")
            }
            if state.outOfRoom.contains(user) { throw MatrixLinkError.notInRoom("M_FORBIDDEN: \(user) is not in the room") }
            if state.forbiddenSendRooms.contains(room) {
                throw MatrixError(kind: .homeserver, call: .send, endpoint: "PUT …/send", status: 403, errcode: .forbidden,
                                  message: "User \(user) not in room \(room)", attempts: 1)
            }
            if let existing = state.byTxn["\(room)|\(txnID)"] { return existing }
            let eventID = EventID("$ev\(state.nextEvent)")!
            state.nextEvent += 1
            state.byTxn["\(room)|\(txnID)"] = eventID
            state.sent.append(Sent(room: room, user: user, message: message, txnID: txnID, eventID: eventID, timestamp: timestamp))
            if state.storedButUnansweredSends > 0 {
                state.storedButUnansweredSends -= 1
                state.byTxn.removeAll()
                let msgtype = MessageType(rawValue: message.kind.rawValue)
                state.timelines[room, default: []].append(MatrixTimelineEntry(
                    eventID: eventID, timestamp: Date(),
                    event: MatrixRoomEvent(eventID: eventID, room: room, sender: user, content: .message(msgtype: msgtype, body: message.body))))
                throw MatrixLinkError.unavailable("connection reset while the homeserver stopped")
            }
            return eventID
        }
    }

    func react(to target: EventID, key: String, as user: UserID, in room: RoomID, txnID: ClientTransactionID,
               timestamp: Date?) async throws -> EventID? {
        state.withLock { state in
            if let existing = state.byTxn["\(room)|\(txnID)"] { return existing }
            let eventID = EventID("$ev\(state.nextEvent)")!
            state.nextEvent += 1
            state.byTxn["\(room)|\(txnID)"] = eventID
            state.reactions.append(Reaction(room: room, user: user, target: target, key: key, eventID: eventID))
            return eventID
        }
    }

    func redact(_ event: EventID, reason: String?, as user: UserID, in room: RoomID, txnID: ClientTransactionID) async throws -> EventID {
        state.withLock { state in
            if let existing = state.byTxn["\(room)|\(txnID)"] { return existing }
            let eventID = EventID("$ev\(state.nextEvent)")!
            state.nextEvent += 1
            state.byTxn["\(room)|\(txnID)"] = eventID
            state.redactions.append(Redaction(room: room, user: user, event: event, reason: reason))
            return eventID
        }
    }

    func setTopic(_ topic: String, in room: RoomID, as user: UserID) async throws {
        try state.withLock { state in
            if state.topicRefused.contains(user) { throw FakeRefusal(errcode: "M_FORBIDDEN") }
            state.topics.append((room, topic, user))
        }
    }

    func setRoomName(_ name: String, in room: RoomID) async throws {
        state.withLock { $0.roomNamesSet.append((room, name)) }
    }

    func joinReplacement(_ room: RoomID, via servers: [String]) async throws -> RoomID? {
        try await join(room, as: botUserID)
        return state.withLock { $0.predecessors[room] }
    }

    func joinedMembers(_ room: RoomID) async throws -> JoinedMembers {
        JoinedMembers(displayNames: state.withLock { $0.members[room] ?? [:] })
    }

    func setTyping(_ typing: Bool, as user: UserID, in room: RoomID, timeout: Duration) async throws {
        state.withLock { $0.typing.append((user, typing)) }
    }

    func sendReadReceipt(for event: EventID, as user: UserID, in room: RoomID) async throws {
        state.withLock { $0.receipts.append((user, event)) }
    }

    /// Pages newest first; the token is how many of the newest entries were handed out already.
    func timeline(_ room: RoomID, from token: String?, limit: Int) async throws -> MatrixTimelinePage {
        state.withLock { state in
            state.timelineReads += 1
            let newestFirst = Array((state.timelines[room] ?? []).reversed())
            let start = token.flatMap(Int.init) ?? 0
            let end = min(newestFirst.count, start + limit)
            return MatrixTimelinePage(entries: Array(newestFirst[start..<end]), next: end < newestFirst.count ? String(end) : nil)
        }
    }
}

/// A refusal by the fake homeserver.
struct FakeRefusal: Error, Equatable {
    var errcode: String
}
