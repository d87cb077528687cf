import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixCrypto

/// The sending end (issue 30, step 5, second half): a ghost's message in an encrypted room goes out as
/// `m.room.encrypted`, with a Megolm session of the ghost's device shared over Olm (`m.room_key`) with every device
/// of the room's other joined and invited members (spec §11.12.4.2, "Sending"). A session is replaced after the room's
/// `rotation_period_msgs` messages or `rotation_period_ms` (defaults 100 and a week) and whenever someone leaves.
///
/// Outbound sessions live in memory only: after a restart the ghost starts a new one and shares it again, which costs
/// one to-device message per device and can never reuse a message index. Olm sessions are kept in the store.
extension GhostDevices {
    /// A room's encryption as its `m.room.encryption` says (spec §11.12.4 defaults).
    struct RoomEncryptionSettings: Sendable, Equatable {
        var rotationMessages = 100
        var rotationPeriod: Duration = .milliseconds(604_800_000)

        init(_ content: JSONValue?) {
            if case .integer(let messages)? = content?["rotation_period_msgs"], messages > 0 { rotationMessages = Int(messages) }
            if case .integer(let milliseconds)? = content?["rotation_period_ms"], milliseconds > 0 { rotationPeriod = .milliseconds(milliseconds) }
        }
    }

    /// Whether `room` is encrypted, asked as `user` (who must be in it) once, then known from its events. Throws what
    /// the homeserver answered other than "no such state": a message is never sent in the clear for want of an answer.
    func isEncrypted(_ room: RoomID, as user: UserID) async throws -> Bool {
        if let known = sending.encryption[room] { return known != nil }
        let content = try await homeserver.roomEncryption(of: room, as: user)
        // Learnt meanwhile from the room's own events: that wins (encryption is never turned off).
        if let known = sending.encryption[room] { return known != nil }
        sending.encryption[room] = .some(content.map(RoomEncryptionSettings.init))
        return content != nil
    }

    /// The room turned encryption on (its `m.room.encryption` event).
    func noteEncryption(_ room: RoomID, content: JSONValue) {
        sending.encryption[room] = .some(RoomEncryptionSettings(content))
    }

    /// Who gets a room key: the joined members, and the invited ones unless the room's history is visible to joined
    /// members only (`history_visibility: joined`) — an invitee may then never read what is sent before they join,
    /// and a key in their hands would let them (as matrix-js-sdk and matrix-rust-sdk decide). Pure.
    static func keyRecipients(_ members: [UserID: Membership], historyVisibility: String?) -> [UserID] {
        let invitedRead = historyVisibility != "joined"
        return members.filter { $0.value == .join || ($0.value == .invite && invitedRead) }.map(\.key)
    }

    /// The room's history visibility changed: its key recipients are read again at the next send.
    func noteHistoryVisibility(_ room: RoomID) {
        sending.members[room] = nil
    }

    /// A membership changed in `room`: its members are read again at the next send, and a leave or a ban ends the
    /// room's outbound sessions (the one who left must not read what follows) — also one being shared right now
    /// (its room's generation moves on, so it is not kept).
    func noteMembership(_ room: RoomID, membership: Membership) {
        sending.members[room] = nil
        guard membership == .leave || membership == .ban else { return }
        sending.outbound = sending.outbound.filter { $0.key.room != room }
        sending.generations[room, default: 0] += 1
    }

    /// These users' device lists changed (a new device, a removed one): read again at the next send, and the rooms
    /// they are in start new sessions (a removed device must not read what follows), as mautrix does.
    func noteDeviceListsChanged(_ users: [UserID]) {
        let changed = Set(users)
        for user in changed { sending.devices[user] = nil }
        for (room, members) in sending.members where !changed.isDisjoint(with: members) {
            sending.outbound = sending.outbound.filter { $0.key.room != room }
            sending.generations[room, default: 0] += 1
        }
    }

    /// `content` of `type` as the `m.room.encrypted` content `ghost` sends in `room`, the room key shared first where
    /// a device of the room's members lacks it. Relations stay in the clear (spec §11.12.4.2).
    func encrypt(type: String, content: JSONValue, in room: RoomID, as ghost: UserID, now: ContinuousClock.Instant = .now) async throws -> JSONValue {
        let generation = sending.generations[room, default: 0]
        let device = try await device(of: ghost)
        guard let (_, account) = try await publishedAccount(of: ghost) else { throw GhostDeviceError.notReady(user: ghost) }
        let settings = (sending.encryption[room] ?? nil) ?? RoomEncryptionSettings(nil)
        let key = OutboundKey(room: room, ghost: ghost)
        var outbound: OutboundRoomSession
        if let current = sending.outbound[key], current.messages < settings.rotationMessages, now - current.created < settings.rotationPeriod {
            outbound = current
        } else {
            outbound = OutboundRoomSession(session: MegolmOutboundSession(), created: now)
        }
        let recipients = try await peerDevices(in: room, as: ghost)
        let unshared = recipients.filter { !outbound.sharedWith.contains($0.id) }
        if !unshared.isEmpty {
            let shared = try await share(outbound.session, in: room, with: unshared, as: ghost, device: device, account: account)
            outbound.sharedWith.formUnion(shared)
        }
        let plaintext = JSONValue.object(["type": .string(type), "content": content, "room_id": .string(room.rawValue)])
        let message = outbound.session.encrypt(Array(try JSONEncoder().encode(plaintext)))
        outbound.messages += 1
        // Someone left while the key was being shared: this message goes with it, the next one with a new session.
        if sending.generations[room, default: 0] == generation { sending.outbound[key] = outbound }
        var encrypted: [String: JSONValue] = [
            "algorithm": .string(Self.megolmAlgorithm), "sender_key": .string(account.curve25519Key.base64),
            "ciphertext": .string(message.base64), "session_id": .string(outbound.session.sessionID),
            "device_id": .string(device.rawValue),
        ]
        if let relation = content["m.relates_to"] { encrypted["m.relates_to"] = relation }
        return .object(encrypted)
    }

    /// The devices of `room`'s joined and invited members but the bridge's own users, with keys their owners signed.
    private func peerDevices(in room: RoomID, as ghost: UserID) async throws -> [PeerDevice] {
        let members: [UserID]
        if let known = sending.members[room] {
            members = known
        } else {
            members = try await homeserver.memberIDs(of: room, as: ghost).filter { !isBridgeUser($0) }
            sending.members[room] = members
        }
        let unknown = members.filter { sending.devices[$0] == nil }
        if !unknown.isEmpty {
            let answer = try await homeserver.deviceKeys(of: unknown, as: ghost)
            for user in unknown { sending.devices[user] = PeerDevice.verified(in: answer[user.rawValue], of: user) }
        }
        return members.flatMap { sending.devices[$0] ?? [] }
    }

    /// Sends `session`'s key to `devices` over Olm (a kept session with each, or a new one on a claimed one-time key
    /// whose signature checks out), and `m.room_key.withheld` to those it cannot reach; returns the devices it handled.
    /// The Olm sessions are kept first.
    private func share(_ session: MegolmOutboundSession, in room: RoomID, with devices: [PeerDevice], as ghost: UserID,
                       device: DeviceID, account: OlmAccount) async throws -> Set<PeerDevice.ID> {
        var sessions: [PeerDevice.ID: (peer: OlmPeer, session: OlmSession)] = [:]
        var toClaim: [UserID: [DeviceID]] = [:]
        var peers: [PeerDevice.ID: OlmPeer] = [:]
        for device in devices {
            guard let identityKey = try? Curve25519PublicKey(base64: device.curve25519) else { continue }
            let peer = OlmPeer(ghost: ghost, identityKey: identityKey)
            peers[device.id] = peer
            // The most recently used session with the device (the one its owner last used too).
            if let kept = try await olmSessions(with: peer).first {
                sessions[device.id] = (peer, kept)
            } else {
                toClaim[device.user, default: []].append(device.device)
            }
        }
        if !toClaim.isEmpty {
            let claimed = try await homeserver.claimOneTimeKeys(toClaim, as: ghost)
            for device in devices where sessions[device.id] == nil {
                guard let peer = peers[device.id],
                      let oneTimeKey = PeerDevice.verifiedOneTimeKey(in: claimed[device.user.rawValue]?[device.device.rawValue], of: device),
                      let created = try? account.createOutboundSession(theirIdentityKey: peer.identityKey, theirOneTimeKey: oneTimeKey)
                else { continue }   // no key left, or not signed by the device: it gets nothing (no withheld notice yet)
                sessions[device.id] = (peer, created)
                markUsed(created, with: peer)
            }
        }
        let roomKey: JSONValue = .object([
            "algorithm": .string(Self.megolmAlgorithm), "room_id": .string(room.rawValue),
            "session_id": .string(session.sessionID), "session_key": .string(session.sessionKey.base64),
        ])
        var messages: [UserID: [DeviceID: JSONValue]] = [:]
        var kept: [ToDeviceChanges] = []
        for peer in devices {
            guard let (olmPeer, olm) = sessions[peer.id] else { continue }
            let payload: JSONValue = .object([
                "type": .string(MatrixEventType.roomKey), "content": roomKey, "sender": .string(ghost.rawValue),
                "sender_device": .string(device.rawValue), "keys": .object(["ed25519": .string(account.ed25519Key.base64)]),
                "recipient": .string(peer.user.rawValue), "recipient_keys": .object(["ed25519": .string(peer.ed25519)]),
            ])
            let encrypted = try olm.encrypt(Array(try JSONEncoder().encode(payload)))
            messages[peer.user, default: [:]][peer.device] = .object([
                "algorithm": .string(Self.olmAlgorithm), "sender_key": .string(account.curve25519Key.base64),
                "ciphertext": .object([peer.curve25519: .object(["type": .integer(Int64(encrypted.type)), "body": .string(encrypted.body)])]),
            ])
            kept.append(ToDeviceChanges(olmSession: used(olm, with: olmPeer)))
        }
        try await store.keepToDeviceChanges(kept)
        if !messages.isEmpty {
            try await homeserver.sendToDevices(messages, kind: .encrypted, transactionID: ClientTransactionID.derived(
                fromSourceKey: "room-key:\(ghost.rawValue):\(session.sessionID):\(UUID().uuidString)"), as: ghost)
        }
        // The devices that get nothing are told why, so their clients show it rather than wait for a key (best effort).
        var withheld: [UserID: [DeviceID: JSONValue]] = [:]
        for device in devices where sessions[device.id] == nil {
            withheld[device.user, default: [:]][device.device] = .object([
                "algorithm": .string(Self.megolmAlgorithm), "room_id": .string(room.rawValue), "session_id": .string(session.sessionID),
                "sender_key": .string(account.curve25519Key.base64), "code": .string("m.no_olm"),
                "reason": .string("The bridge could not set up a secure channel with this device (no one-time key)."),
            ])
        }
        if !withheld.isEmpty {
            try? await homeserver.sendToDevices(withheld, kind: .withheld, transactionID: ClientTransactionID.derived(
                fromSourceKey: "withheld:\(ghost.rawValue):\(session.sessionID):\(UUID().uuidString)"), as: ghost)
        }
        // Withheld devices too: this session does not try them again (the next one does).
        return Set(devices.map(\.id))
    }
}

/// Where a ghost's outbound Megolm session is used.
struct OutboundKey: Hashable, Sendable {
    var room: RoomID
    var ghost: UserID
}

/// A ghost's Megolm session for one room, and who has its key.
struct OutboundRoomSession {
    let session: MegolmOutboundSession
    let created: ContinuousClock.Instant
    var messages = 0
    var sharedWith: Set<PeerDevice.ID> = []

    init(session: MegolmOutboundSession, created: ContinuousClock.Instant) {
        self.session = session
        self.created = created
    }
}

/// What the sending side remembers: rooms' encryption, members, their devices, and the outbound sessions.
struct SendingState {
    /// nil: not known yet; `.some(nil)`: known not to be encrypted.
    var encryption: [RoomID: GhostDevices.RoomEncryptionSettings?] = [:]
    var members: [RoomID: [UserID]] = [:]
    var devices: [UserID: [PeerDevice]] = [:]
    var outbound: [OutboundKey: OutboundRoomSession] = [:]
    /// Per room, how many leaves and bans were seen: an outbound session made before one is not kept.
    var generations: [RoomID: Int] = [:]
}

/// A Matrix user's device as `/keys/query` lists it, once its own signature checked out. Pure value.
struct PeerDevice: Sendable, Hashable {
    struct ID: Hashable, Sendable {
        var user: UserID
        var device: DeviceID
    }

    var user: UserID
    var device: DeviceID
    var curve25519: String
    var ed25519: String
    var id: ID { ID(user: user, device: device) }

    /// The devices of `user` in a `/keys/query` answer's `device_keys[user]` whose keys name them and are signed by
    /// their own Ed25519 key; the others are left out.
    static func verified(in devices: JSONValue?, of user: UserID) -> [PeerDevice] {
        guard case .object(let byID)? = devices else { return [] }
        return byID.compactMap { id, keys in
            guard let device = DeviceID(id), keys["user_id"]?.stringValue == user.rawValue, keys["device_id"]?.stringValue == id,
                  let curve = keys["keys"]?["curve25519:\(id)"]?.stringValue, let ed = keys["keys"]?["ed25519:\(id)"]?.stringValue,
                  let signing = try? Ed25519PublicKey(base64: ed), let canonical = CanonicalJSON(keys),
                  (try? canonical.verifySignature(by: user.rawValue, keyID: "ed25519:\(id)", publicKey: signing)) != nil
            else { return nil }
            return PeerDevice(user: user, device: device, curve25519: curve, ed25519: ed)
        }
    }

    /// The one-time (or fallback) key claimed for `peer`, if its signature by the device checks out.
    static func verifiedOneTimeKey(in claimed: JSONValue?, of peer: PeerDevice) -> Curve25519PublicKey? {
        guard case .object(let keys)? = claimed, let signing = try? Ed25519PublicKey(base64: peer.ed25519) else { return nil }
        for (id, object) in keys where id.hasPrefix(MatrixAlgorithm.signedCurve25519 + ":") {
            guard let canonical = CanonicalJSON(object), let text = object["key"]?.stringValue,
                  (try? canonical.verifySignature(by: peer.user.rawValue, keyID: "ed25519:\(peer.device.rawValue)", publicKey: signing)) != nil
            else { continue }
            return try? Curve25519PublicKey(base64: text)
        }
        return nil
    }
}
