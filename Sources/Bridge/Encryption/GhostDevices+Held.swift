import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import Matrix

/// Encrypted events that come before their room key: the homeserver pushes a room event and the to-device message
/// that carries its key in whichever transaction it likes, and never waits for one to be acknowledged before the
/// other. Such an event is kept in the store (``Store/holdEncryptedEvents(_:)``) instead of being queued, released —
/// decrypted — when its key comes, or after ``keyWait`` queued as it is, so the room is told it was not bridged.
extension GhostDevices {
    /// How long an event waits for its room key before the room is told.
    static let keyWait: Duration = .seconds(10)

    /// Keeps `events` of the rooms the bridge serves (their keys missing) until their keys come; the others are left
    /// out (nothing would be done with them). Returns the ids of those kept.
    func hold(_ events: [(event: ClientEvent, sessionID: String)], now: Date = Date()) async throws -> Set<EventID> {
        guard !events.isEmpty else { return [] }
        let rooms = Set(events.map(\.event.roomID))
        let served = try await store.linkedRooms(among: rooms).union(store.directRooms(among: rooms))
        let held = events.filter { served.contains($0.event.roomID) }.compactMap { item -> HeldEncryptedEvent? in
            guard let json = try? JSONEncoder().encode(item.event) else { return nil }
            return HeldEncryptedEvent(eventID: item.event.eventID, room: item.event.roomID, sessionID: item.sessionID,
                                      event: String(decoding: json, as: UTF8.self), heldAt: Self.milliseconds(now))
        }
        try await store.holdEncryptedEvents(held)
        for item in events where served.contains(item.event.roomID) { await requestKey(for: item.event, sessionID: item.sessionID) }
        return Set(held.map(\.eventID))
    }

    /// Asks the sender's devices for a missing room key (`m.room_key_request`, spec §11.12.5.1), once per session, from
    /// the device of a bridge user in the room — the one the sender's client meant to share it with. A client answers
    /// such a request from another user's device when it had shared the session with that device (Element does; nio
    /// alone answers only its own user; the end-to-end tests' client answers as Element does). Best effort: the held
    /// event is told after its wait either way.
    func requestKey(for event: ClientEvent, sessionID: String) async {
        let request = KeyRequestKey(room: event.roomID, sessionID: sessionID, sender: event.sender)
        guard !requestedKeys.contains(request) else { return }
        if requestedKeys.count >= Self.requestedKeysKept { requestedKeys.removeAll() }
        requestedKeys.insert(request)
        guard case .unknown(_, let content) = event.content, let (user, device) = await requester(in: event.roomID) else { return }
        var body: [String: JSONValue] = ["algorithm": .string(Self.megolmAlgorithm), "room_id": .string(event.roomID.rawValue),
                                         "session_id": .string(sessionID)]
        if let senderKey = content["sender_key"] { body["sender_key"] = senderKey }
        let requestID = UUID().uuidString
        let message: JSONValue = .object(["action": .string("request"), "body": .object(body), "request_id": .string(requestID),
                                          "requesting_device_id": .string(device.rawValue)])
        do {
            // `*`: every device of the sender (any of them may hold the session).
            try await homeserver.sendToDevices([event.sender: [DeviceID("*")!: message]], kind: .keyRequest,
                                               transactionID: ClientTransactionID.derived(fromSourceKey: "key-request:\(requestID)"), as: user)
        } catch {
            logger.info("Could not ask for a missing room key", metadata: ["matrix.event.id": event.eventID.rawValue, "error": "\(error)"])
        }
    }

    /// A bridge user in `room` whose device's keys are published: the DM's ghost, else a joined ghost of the linked room.
    private func requester(in room: RoomID) async -> (UserID, DeviceID)? {
        var candidates: [UserID] = []
        if let chat = try? await store.directChat(in: room) { candidates.append(chat.ghost) }
        candidates += ((try? await store.roomGhosts(room)) ?? []).filter(\.joined).map(\.user)
        for user in candidates {
            if let (device, _) = try? await publishedAccount(of: user) { return (user, device) }
        }
        return nil
    }

    /// The held events that the room keys just kept decrypt, decrypted (to queue now; ``forgetHeld(_:)`` once queued).
    func released(by keys: [(room: RoomID, sessionID: String)]) async throws -> [ClientEvent] {
        var released: [ClientEvent] = []
        for key in keys {
            for held in try await store.heldEncryptedEvents(for: key.sessionID, in: key.room) {
                guard let event = Self.event(held), case .decrypted(let clear) = try await decrypt(event) else { continue }
                released.append(clear)
            }
        }
        return released
    }

    /// The held events whose wait is over at `now`: decrypted if their key came meanwhile, else as they came (to
    /// queue; ``forgetHeld(_:)`` once queued), with the ids of all of them.
    func expired(now: Date = Date()) async throws -> (events: [ClientEvent], ids: [EventID]) {
        let due = try await store.heldEncryptedEvents(heldBefore: Self.milliseconds(now) - Int64(Self.keyWait.components.seconds * 1000))
        var events: [ClientEvent] = []
        for held in due {
            guard let event = Self.event(held) else { continue }
            if case .decrypted(let clear) = try await decrypt(event) {
                events.append(clear)
            } else {
                events.append(event)
                logRefusal("An encrypted event's room key never came; the room is told it was not bridged", reason: .roomKeyNeverCame,
                           now: .now, metadata: ["matrix.event.id": held.eventID.rawValue, "megolm.session.id": held.sessionID])
            }
        }
        return (events, due.map(\.eventID))
    }

    /// Forgets held events once what became of them is queued.
    func forgetHeld(_ events: [EventID]) async throws {
        try await store.releaseHeldEncryptedEvents(events)
    }

    /// Key requests remembered at most (then forgotten all at once: a request sent twice does no harm).
    static let requestedKeysKept = 4096

    private static func event(_ held: HeldEncryptedEvent) -> ClientEvent? {
        try? JSONDecoder().decode(ClientEvent.self, from: Data(held.event.utf8))
    }

    private static func milliseconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970 * 1000) }
}

/// Queues the held encrypted events whose wait for their room key is over (``GhostDevices/expired(now:)``), every
/// second: decrypted when the key came meanwhile, else as they are, so the room is told.
struct HeldEncryptedEventSweeper: BridgeService {
    let devices: GhostDevices
    let bridge: Bridge
    static let interval: Duration = .seconds(1)

    func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.interval)
            do {
                let (events, ids) = try await devices.expired()
                guard !ids.isEmpty else { continue }
                try await bridge.acceptMatrixEvents(events.compactMap(BridgeAppServiceHandler.roomEvent), mark: nil)
                try await devices.forgetHeld(ids)
            } catch {
                devices.logger.warning("Could not queue encrypted events whose keys never came; trying again", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// A room key asked for (``GhostDevices/requestKey(for:sessionID:)``).
struct KeyRequestKey: Hashable, Sendable {
    var room: RoomID
    var sessionID: String
    var sender: UserID
}
