/// The Megolm ratchet (Megolm spec, "The Megolm ratchet algorithm"): four 32-byte parts R(0)…R(3) and a 32-bit
/// index i. Part j is re-hashed every 2^(8·(3−j)) steps, and when part j changes every lower part is derived afresh
/// from it: H_k(A) = HMAC-SHA-256(A, [k]). So any later state is reachable in at most 4 × 256 hashes, while earlier
/// states cannot be recovered. Pure value.
struct MegolmRatchet: Sendable, Equatable {
    /// Length of the serialized state (four parts).
    static let length = 128

    /// R(0)…R(3).
    private(set) var parts: [[UInt8]]
    /// The message index this state encrypts.
    private(set) var index: UInt32

    /// A state from its 128 bytes (R(0) ‖ R(1) ‖ R(2) ‖ R(3)) at `index`.
    init(data: [UInt8], index: UInt32) throws {
        guard data.count == Self.length else {
            throw MatrixCryptoError.invalidLength(kind: "Megolm ratchet", expected: Self.length, actual: data.count)
        }
        parts = (0..<4).map { Array(data[$0 * 32..<($0 + 1) * 32]) }
        self.index = index
    }

    /// A fresh random state at index 0.
    static func random() -> MegolmRatchet {
        try! MegolmRatchet(data: CryptoPrimitives.randomBytes(length), index: 0)
    }

    /// The 128 bytes of the state: the input of the message keys, and what session keys carry.
    var data: [UInt8] { parts.flatMap { $0 } }

    /// One step: i + 1 (wrapping at 2^32). The highest part that changes is the one whose period divides the new
    /// index: R(0) every 2^24, R(1) every 2^16, R(2) every 2^8, otherwise only R(3).
    mutating func advance() {
        index &+= 1
        let highest = index & 0x00FF_FFFF == 0 ? 0 : index & 0xFFFF == 0 ? 1 : index & 0xFF == 0 ? 2 : 3
        rederive(from: highest)
    }

    /// Steps forward to `target` (wrapping past 2^32 − 1 when `target` is below the index) in at most 1,024 hashes:
    /// for each part from the highest, re-hash it as many times as its digit of the index must move (0–255, or 256
    /// for R(0) after a wrap), deriving the lower parts from it at the last step only.
    mutating func advance(to target: UInt32) {
        for part in 0..<4 {
            let shift = UInt32(8 * (3 - part))
            var steps = ((target >> shift) &- (index >> shift)) & 0xFF
            if steps == 0 {
                // The digit is already right, unless the target lies a whole turn of R(0) ahead (a wrap).
                guard target < index else { continue }
                steps = 0x100
            }
            for _ in 1..<steps { parts[part] = Self.hash(parts[part], part) }
            rederive(from: part)
            index = target & (UInt32.max << shift)
        }
    }

    /// The cipher of the message at this index.
    var cipher: MessageCipher { MessageCipher(messageKey: data, info: MessageCipher.megolmInfo) }

    /// R(k) = H_k(R(from)) for k from 3 down to `from` (R(from) last, since the others are derived from its old value).
    private mutating func rederive(from highest: Int) {
        for part in stride(from: 3, through: highest, by: -1) {
            parts[part] = Self.hash(parts[highest], part)
        }
    }

    private static func hash(_ part: [UInt8], _ number: Int) -> [UInt8] {
        CryptoPrimitives.hmacSHA256(key: part, message: [UInt8(number)])
    }
}
