import FoundationEssentials
import IsthmusCommon
import IsthmusStore
import Matrix
import MatrixCrypto

/// Decrypting Matrix users' encrypted room events with the room keys their devices shared with the ghosts (issue 30,
/// step 5; spec §11.12.4.2 "m.megolm.v1.aes-sha2"). The decrypted event then goes where its cleartext twin would.
extension GhostDevices {
    enum RoomDecryption: Sendable, Equatable {
        /// The event as it was before encryption: its type and content, with the outer event's id, room and sender.
        case decrypted(ClientEvent)
        /// No ghost holds the room key (yet): the sender's device did not share it, or its to-device message was lost.
        case missingKey(sessionID: String)
        /// Not decryptable, and never will be: why.
        case refused(DecryptionRefusal)
    }

    /// `event` (an `m.room.encrypted` room event) decrypted. Throws only when the store cannot be read or written.
    func decrypt(_ event: ClientEvent, now: ContinuousClock.Instant = .now) async throws -> RoomDecryption {
        guard case .unknown(type: MatrixEventType.encrypted, let content) = event.content else { return .refused(.notEncrypted) }
        let result = try await megolmDecrypt(event, content: content)
        switch result {
        case .decrypted:
            break
        case .missingKey(let sessionID):
            // Held until the key comes (``hold(_:now:)``); told only if it never does.
            logger.debug("An encrypted event came before its room key", metadata: [
                "matrix.event.id": event.eventID.rawValue, "megolm.session.id": sessionID])
        case .refused(let reason):
            logRefusal("An encrypted event was refused", reason: reason, now: now, metadata: ["matrix.event.id": event.eventID.rawValue])
        }
        return result
    }

    private func megolmDecrypt(_ event: ClientEvent, content: JSONValue) async throws -> RoomDecryption {
        guard content["algorithm"]?.stringValue == Self.megolmAlgorithm else { return .refused(.notMegolm) }
        guard let sessionID = content["session_id"]?.stringValue,
              let ciphertext = content["ciphertext"]?.stringValue.flatMap({ try? MegolmMessage(base64: $0) })
        else { return .refused(.noMegolmCiphertext) }
        // A room key belongs to the user whose device shared it: nobody else's events decrypt with it.
        guard let stored = try await store.megolmSession(sessionID, in: event.roomID, sharedBy: event.sender) else {
            return .missingKey(sessionID: sessionID)
        }
        let decrypted: MegolmInboundSession.Decrypted
        do {
            decrypted = try MegolmInboundSession(pickle: stored.pickle, key: pickleKey).decrypt(ciphertext)
        } catch {
            return .refused(.ciphertextDoesNotDecrypt)
        }
        guard try await store.recordMegolmIndex(decrypted.messageIndex, of: sessionID, in: event.roomID, by: event.eventID) else {
            return .refused(.replayedMessageIndex)
        }
        guard let payload = try? JSONDecoder().decode(JSONValue.self, from: Data(decrypted.plaintext)),
              payload["room_id"]?.stringValue == event.roomID.rawValue,
              let type = payload["type"]?.stringValue, case .object(var inner)? = payload["content"]
        else { return .refused(.payloadNotOfThisRoom) }
        // Only what clients encrypt: a redaction, membership or state inside a ciphertext was never checked by the
        // homeserver (`m.room.redaction` names its target in its content).
        guard Self.decryptableTypes.contains(type) else { return .refused(.typeNeverEncrypted) }
        // Relations stay in the clear, outside the ciphertext (spec §11.12.4.2): the decrypted event has them back.
        if inner["m.relates_to"] == nil, let relation = content["m.relates_to"] { inner["m.relates_to"] = relation }
        return Self.replacing(event, type: type, content: .object(inner)).map(RoomDecryption.decrypted)
            ?? .refused(.undecodableEvent)
    }

    /// The event types an encrypted event may carry here: messages, reactions, stickers.
    static let decryptableTypes: Set<String> = [MatrixEventType.message, MatrixEventType.reaction, MatrixEventType.sticker]

    /// `event` with another type and content (the same id, room, sender, time and unsigned data), decoded as a new
    /// event so its content is typed as any event's.
    static func replacing(_ event: ClientEvent, type: String, content: JSONValue) -> ClientEvent? {
        guard let outer = try? JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(event)),
              case .object(var members) = outer else { return nil }
        members["type"] = .string(type)
        members["content"] = content
        return try? JSONDecoder().decode(ClientEvent.self, from: JSONEncoder().encode(JSONValue.object(members)))
    }
}
