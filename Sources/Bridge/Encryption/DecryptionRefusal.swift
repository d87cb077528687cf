/// Why a to-device message or an encrypted room event was not used (logged, rate-limited, by its `description`).
/// Pure value.
enum DecryptionRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    // To-device messages (Olm):
    case notForOurDevice
    case notOlm
    case noCiphertextForOurDevice
    case preKeyMessageNotDecryptedBySession
    case preKeyMessageForUnknownKey
    case noOlmSessionDecrypts
    case payloadMismatch
    case invalidRoomKey
    case roomKeySessionIDMismatch
    case roomKeyForUnservedRoom
    // Room events (Megolm):
    case notEncrypted
    case notMegolm
    case noMegolmCiphertext
    case ciphertextDoesNotDecrypt
    case replayedMessageIndex
    case payloadNotOfThisRoom
    case typeNeverEncrypted
    case undecodableEvent
    /// Its room key never came within ``GhostDevices/keyWait``.
    case roomKeyNeverCame

    var description: String {
        switch self {
        case .notForOurDevice: "not for the ghost's device"
        case .notOlm: "not Olm"
        case .noCiphertextForOurDevice: "no ciphertext for the ghost's device"
        case .preKeyMessageNotDecryptedBySession: "a pre-key message its session does not decrypt"
        case .preKeyMessageForUnknownKey: "a pre-key message that matches no one-time key"
        case .noOlmSessionDecrypts: "no Olm session decrypts it"
        case .payloadMismatch: "the Olm payload does not name this sender, this ghost and its key"
        case .invalidRoomKey: "a room key that is not a valid Megolm session key"
        case .roomKeySessionIDMismatch: "a room key whose session id is not its key's"
        case .roomKeyForUnservedRoom: "a room key for a room the bridge does not serve"
        case .notEncrypted: "not encrypted"
        case .notMegolm: "not Megolm"
        case .noMegolmCiphertext: "no Megolm ciphertext"
        case .ciphertextDoesNotDecrypt: "the ciphertext does not decrypt with its room key"
        case .replayedMessageIndex: "a message index used by another event (a replay)"
        case .payloadNotOfThisRoom: "the decrypted payload is not an event of this room"
        case .typeNeverEncrypted: "an encrypted event of a type that is never encrypted"
        case .undecodableEvent: "the decrypted event does not decode"
        case .roomKeyNeverCame: "its room key never came"
        }
    }
}
