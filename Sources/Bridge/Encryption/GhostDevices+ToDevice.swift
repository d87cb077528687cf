import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixCrypto

/// The receiving end of to-device messages (issue 30, step 5): room keys that Matrix users' devices send the ghosts'
/// devices over Olm (`m.room.encrypted` with `m.olm.v1.curve25519-aes-sha2`, carrying `m.room_key`). What they change
/// — the Olm session, the one-time key used up, the room key — is kept in one commit before the homeserver's
/// transaction is acknowledged, since it never sends them again (Synapse #14710).
extension GhostDevices {
    /// What became of one to-device message.
    enum ToDeviceOutcome: Sendable, Equatable {
        /// A room key for `room`, now kept.
        case roomKey(room: RoomID, sessionID: String)
        /// Decrypted, but not something the bridge uses yet (a key request, a dummy, a withheld notice…).
        case other(type: String)
        /// Not for a device of ours, not Olm, or refused: why.
        case refused(String)
    }

    /// Olm of the Matrix spec (§11.12.4.1 "m.olm.v1.curve25519-aes-sha2").
    static let olmAlgorithm = "m.olm.v1.curve25519-aes-sha2"
    static let megolmAlgorithm = "m.megolm.v1.aes-sha2"

    /// Decrypts `messages` addressed to the ghosts' devices and keeps what they carry. Throws only when the store
    /// could not keep it (the transaction then fails; what it carried is lost with it, as the homeserver resends no
    /// to-device message: a later step asks the sender again).
    @discardableResult
    func receive(_ messages: [ToDeviceEvent], now: ContinuousClock.Instant = .now) async throws -> [ToDeviceOutcome] {
        var changes: [ToDeviceChanges] = []
        var outcomes: [ToDeviceOutcome] = []
        var sessions = OlmSessionCache()
        for message in messages {
            do {
                let (outcome, change) = try await receive(message, sessions: &sessions)
                outcomes.append(outcome)
                if let change { changes.append(change) }
            } catch let refusal as ToDeviceRefusal {
                outcomes.append(.refused(refusal.reason))
                logRefusal("A to-device message for a ghost's device was refused", reason: refusal.reason, now: now, metadata: [
                    "matrix.user.id": message.sender.rawValue, "matrix.ghost.id": message.recipient.rawValue, "to_device.type": message.type])
            }
        }
        try await store.keepToDeviceChanges(changes)
        return outcomes
    }

    private func receive(_ message: ToDeviceEvent, sessions: inout OlmSessionCache) async throws -> (ToDeviceOutcome, ToDeviceChanges?) {
        guard message.type == MatrixEventType.encrypted else { return (.other(type: message.type), nil) }
        guard let (device, account) = try await publishedAccount(of: message.recipient), device == message.recipientDevice else {
            throw ToDeviceRefusal("not for the ghost's device")
        }
        let content = message.content
        guard content["algorithm"]?.stringValue == Self.olmAlgorithm else { throw ToDeviceRefusal("not Olm") }
        guard let senderText = content["sender_key"]?.stringValue, let senderKey = try? Curve25519PublicKey(base64: senderText),
              let ours = content["ciphertext"]?[account.curve25519Key.base64], let type = ours["type"].flatMap(Self.integer),
              let body = ours["body"]?.stringValue, let olm = try? OlmMessage(type: type, body: body)
        else { throw ToDeviceRefusal("no ciphertext for the ghost's device") }

        let user = message.recipient
        let existing: [OlmSession]
        if let known = sessions.sessions(user: user, senderKey: senderText) {
            existing = known
        } else {
            let stored = try await store.olmSessions(of: user, with: senderText)
            existing = stored.compactMap { try? OlmSession(pickle: $0.pickle, key: pickleKey) }
            sessions.set(existing, user: user, senderKey: senderText)
        }
        var plaintext: [UInt8]?
        var session: OlmSession?
        var accountChanged = false
        for candidate in existing {
            if case .preKey(let preKey) = olm, !candidate.matches(preKey, from: senderKey) { continue }
            if let decrypted = try? candidate.decrypt(olm) { (plaintext, session) = (decrypted, candidate); break }
        }
        if plaintext == nil, case .preKey(let preKey) = olm {
            guard let created = try? account.createInboundSession(theirIdentityKey: senderKey, message: preKey) else {
                throw ToDeviceRefusal("a pre-key message that matches no one-time key")
            }
            (plaintext, session, accountChanged) = (created.plaintext, created.session, true)
            sessions.add(created.session, user: user, senderKey: senderText)
        }
        guard let plaintext, let session else { throw ToDeviceRefusal("no Olm session decrypts it") }
        var change = ToDeviceChanges(olmSession: StoredOlmSession(user: user, senderKey: senderText, sessionID: session.sessionID,
                                                                  pickle: session.pickle(with: pickleKey)))
        if accountChanged { change.account = (user, account.pickle(with: pickleKey)) }

        // The payload names who sent it to whom, with which keys (spec §11.12.4.1.1): all must match.
        guard let payload = try? JSONDecoder().decode(JSONValue.self, from: Data(plaintext)),
              payload["sender"]?.stringValue == message.sender.rawValue,
              payload["recipient"]?.stringValue == user.rawValue,
              payload["recipient_keys"]?["ed25519"]?.stringValue == account.ed25519Key.base64,
              let type = payload["type"]?.stringValue
        else { throw ToDeviceRefusal("the Olm payload does not name this sender, this ghost and its key") }
        guard type == "m.room_key" else { return (.other(type: type), change) }
        let key = payload["content"]
        guard key?["algorithm"]?.stringValue == Self.megolmAlgorithm,
              let room = key?["room_id"]?.stringValue.flatMap(RoomID.init), let sessionID = key?["session_id"]?.stringValue,
              let sessionKey = key?["session_key"]?.stringValue.flatMap({ try? MegolmSessionKey(base64: $0) }),
              let signingKey = payload["keys"]?["ed25519"]?.stringValue
        else { throw ToDeviceRefusal("a room key that is not a valid Megolm session key") }
        let inbound = MegolmInboundSession(sessionKey: sessionKey)
        guard inbound.sessionID == sessionID else { throw ToDeviceRefusal("a room key whose session id is not its key's") }
        // A device that shares a key may be new to the ghosts' own sending: its user's devices are read again.
        sending.devices[message.sender] = nil
        change.roomKey = StoredMegolmSession(room: room, sessionID: sessionID, sender: message.sender, senderKey: senderText,
                                             signingKey: signingKey, pickle: inbound.pickle(with: pickleKey))
        return (.roomKey(room: room, sessionID: sessionID), change)
    }

    /// The account of `ghost`'s device once its keys are published (nil before: nobody can have sent it anything).
    func publishedAccount(of ghost: UserID) async throws -> (DeviceID, OlmAccount)? {
        if let known = accounts[ghost] { return known }
        guard let stored = try await store.ghostDevice(ghost), stored.stage >= .keysPublished else { return nil }
        let account: OlmAccount
        do {
            account = try OlmAccount(pickle: stored.account, key: pickleKey)
        } catch {
            throw GhostDeviceError.pickleKeyDoesNotOpen(user: ghost)
        }
        accounts[ghost] = (stored.device, account)
        return (stored.device, account)
    }

    /// One log line a minute per reason (anyone on Matrix can send the ghosts to-device messages).
    func logRefusal(_ message: String, reason: String, now: ContinuousClock.Instant, metadata: Logger.Metadata) {
        guard let line = refusalLog.refused(.init(address: "matrix", reason: reason), now: now) else { return }
        logger.info(message, metadata: metadata.merging(["reason": "\(reason)", "refused.unlogged": "\(line.suppressed)"]) { $1 })
    }

    private static func integer(_ value: JSONValue) -> Int? {
        switch value {
        case .integer(let number): Int(exactly: number)
        case .double(let number): Int(exactly: number)
        default: nil
        }
    }
}

/// A to-device message the bridge will not use, and why (logged, rate-limited).
struct ToDeviceRefusal: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}

/// The Olm sessions one batch of to-device messages uses, loaded once and kept in memory until the batch's commit,
/// so two messages of one session in one transaction see each other's ratchet steps.
struct OlmSessionCache {
    private var sessions: [String: [OlmSession]] = [:]

    /// The sessions loaded for the pair, nil when not loaded yet.
    func sessions(user: UserID, senderKey: String) -> [OlmSession]? {
        sessions[user.rawValue + "|" + senderKey]
    }

    mutating func set(_ loaded: [OlmSession], user: UserID, senderKey: String) {
        sessions[user.rawValue + "|" + senderKey] = loaded
    }

    mutating func add(_ session: OlmSession, user: UserID, senderKey: String) {
        sessions[user.rawValue + "|" + senderKey, default: []].append(session)
    }
}
