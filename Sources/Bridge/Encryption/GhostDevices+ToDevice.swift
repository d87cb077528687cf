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
        case refused(DecryptionRefusal)
    }

    static let olmAlgorithm = MatrixAlgorithm.olm
    static let megolmAlgorithm = MatrixAlgorithm.megolm

    /// Decrypts `messages` addressed to the ghosts' devices and keeps what they carry. Throws only when the store
    /// could not keep it (the transaction then fails; what it carried is lost with it, as the homeserver resends no
    /// to-device message: the sender's next message shares its key again, or the room is told).
    @discardableResult
    func receive(_ messages: [ToDeviceEvent], now: ContinuousClock.Instant = .now) async throws -> [ToDeviceOutcome] {
        var batch = ToDeviceBatch()
        var outcomes: [ToDeviceOutcome] = []
        for message in messages {
            do {
                outcomes.append(try await receive(message, into: &batch))
            } catch let refusal as DecryptionRefusal {
                outcomes.append(.refused(refusal))
                logRefusal("A to-device message for a ghost's device was refused", reason: refusal, now: now, metadata: [
                    "matrix.user.id": message.sender.rawValue, "matrix.ghost.id": message.recipient.rawValue, "to_device.type": message.type])
            }
        }
        // Pickled now, after the last message of the batch moved them on.
        var changes = batch.sessions.map { ToDeviceChanges(olmSession: used($0.session, with: $0.peer)) }
        changes += batch.accounts.compactMap { ghost in accounts[ghost].map { ToDeviceChanges(account: (ghost, $0.account.pickle(with: pickleKey))) } }
        changes += batch.roomKeys.map { ToDeviceChanges(roomKey: $0) }
        try await store.keepToDeviceChanges(changes)
        return outcomes
    }

    private func receive(_ message: ToDeviceEvent, into batch: inout ToDeviceBatch) async throws -> ToDeviceOutcome {
        guard message.type == MatrixEventType.encrypted else { return .other(type: message.type) }
        guard let (device, account) = try await publishedAccount(of: message.recipient), device == message.recipientDevice else {
            throw DecryptionRefusal.notForOurDevice
        }
        let content = message.content
        guard content["algorithm"]?.stringValue == Self.olmAlgorithm else { throw DecryptionRefusal.notOlm }
        guard let senderText = content["sender_key"]?.stringValue, let senderKey = try? Curve25519PublicKey(base64: senderText),
              let ours = content["ciphertext"]?[account.curve25519Key.base64], let type = ours["type"].flatMap(Self.integer),
              let body = ours["body"]?.stringValue, let olm = try? OlmMessage(type: type, body: body)
        else { throw DecryptionRefusal.noCiphertextForOurDevice }

        let user = message.recipient
        let peer = OlmPeer(ghost: user, identityKey: senderKey)
        let existing = try await olmSessions(with: peer)
        // No await from here to the end of the decryption: the sessions and the account are not touched meanwhile.
        var decrypted: (plaintext: [UInt8], session: OlmSession)?
        if case .preKey(let preKey) = olm, let known = existing.first(where: { $0.matches(preKey, from: senderKey) }) {
            // A pre-key message of a session we have: that session decrypts it, or it is refused (a replay would
            // otherwise make the session anew and reset it).
            guard let plaintext = try? known.decrypt(olm) else { throw DecryptionRefusal.preKeyMessageNotDecryptedBySession }
            decrypted = (plaintext, known)
        } else if case .preKey(let preKey) = olm {
            guard let created = try? account.createInboundSession(theirIdentityKey: senderKey, message: preKey) else {
                throw DecryptionRefusal.preKeyMessageForUnknownKey
            }
            decrypted = (created.plaintext, created.session)
            batch.accounts.insert(user)
        } else {
            for candidate in existing { if let plaintext = try? candidate.decrypt(olm) { decrypted = (plaintext, candidate); break } }
        }
        guard let (plaintext, session) = decrypted else { throw DecryptionRefusal.noOlmSessionDecrypts }
        markUsed(session, with: peer)
        batch.touch(session, with: peer)

        // The payload names who sent it to whom, with which keys (spec §11.12.4.1.1): all must match.
        guard let payload = try? JSONDecoder().decode(JSONValue.self, from: Data(plaintext)),
              payload["sender"]?.stringValue == message.sender.rawValue,
              payload["recipient"]?.stringValue == user.rawValue,
              payload["recipient_keys"]?["ed25519"]?.stringValue == account.ed25519Key.base64,
              let type = payload["type"]?.stringValue
        else { throw DecryptionRefusal.payloadMismatch }
        // A room key, or one forwarded in answer to a key request (spec §11.12.5.1: the exported form, without the
        // session's signature; it is kept, like any key, only for the events of the user who sent it).
        let forwarded = type == MatrixEventType.forwardedRoomKey
        guard type == MatrixEventType.roomKey || forwarded else { return .other(type: type) }
        let key = payload["content"]
        guard key?["algorithm"]?.stringValue == Self.megolmAlgorithm,
              let room = key?["room_id"]?.stringValue.flatMap(RoomID.init), let sessionID = key?["session_id"]?.stringValue,
              let sessionText = key?["session_key"]?.stringValue,
              let inbound = Self.inboundSession(sessionText, forwarded: forwarded),
              let signingKey = forwarded ? key?["sender_claimed_ed25519_key"]?.stringValue : payload["keys"]?["ed25519"]?.stringValue
        else { throw DecryptionRefusal.invalidRoomKey }
        guard inbound.sessionID == sessionID else { throw DecryptionRefusal.roomKeySessionIDMismatch }
        // Only the rooms the bridge serves: anyone may send the ghosts keys, and nothing else is worth a row.
        let rooms: Set<RoomID> = [room]
        let linked = try await store.linkedRooms(among: rooms)
        let direct = linked.isEmpty ? try await store.directRooms(among: rooms) : []
        guard !linked.isEmpty || !direct.isEmpty else {
            throw DecryptionRefusal.roomKeyForUnservedRoom
        }
        // A device that shares a key may be new to the ghosts' own sending: its user's devices are read again.
        sending.devices[message.sender] = nil
        batch.roomKeys.append(StoredMegolmSession(room: room, sessionID: sessionID, sender: message.sender, senderKey: senderKey.base64,
                                                  signingKey: signingKey, pickle: inbound.pickle(with: pickleKey)))
        return .roomKey(room: room, sessionID: sessionID)
    }

    /// A room key's session: a signed session key, or (forwarded) an exported one; nil when it does not parse.
    private static func inboundSession(_ text: String, forwarded: Bool) -> MegolmInboundSession? {
        if forwarded { return (try? MegolmExportedSessionKey(base64: text)).map { MegolmInboundSession(exportedKey: $0) } }
        return (try? MegolmSessionKey(base64: text)).map { MegolmInboundSession(sessionKey: $0) }
    }

    /// The account of `ghost`'s device once its keys are published (nil before: nobody can have sent it anything).
    func publishedAccount(of ghost: UserID) async throws -> (DeviceID, OlmAccount)? {
        if let known = accounts[ghost] { return known }
        guard let stored = try await store.ghostDevice(ghost), stored.stage >= .keysPublished else { return nil }
        if let known = accounts[ghost] { return known }   // loaded meanwhile (during the read): one object only
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
    func logRefusal(_ message: String, reason: DecryptionRefusal, now: ContinuousClock.Instant, metadata: Logger.Metadata) {
        guard let line = refusalLog.refused(.init(address: "matrix", reason: reason.description), now: now) else { return }
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

/// What one transaction's to-device messages changed, kept in one commit at its end.
struct ToDeviceBatch {
    /// The Olm sessions that moved on, once each.
    private(set) var sessions: [(peer: OlmPeer, session: OlmSession)] = []
    /// Ghosts whose account used up a one-time key.
    var accounts: Set<UserID> = []
    var roomKeys: [StoredMegolmSession] = []

    mutating func touch(_ session: OlmSession, with peer: OlmPeer) {
        if !sessions.contains(where: { $0.session === session }) { sessions.append((peer, session)) }
    }
}
