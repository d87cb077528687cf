/// Everything that can fail in `MatrixCrypto`, with the context a log line or a test needs. One family for the module.
///
/// Decryption failures say *which* check failed (MAC, signature, index) but never carry secret bytes.
public enum MatrixCryptoError: Error, Sendable, Equatable {
    // MARK: Primitives

    /// An OpenSSL call failed (`operation` names the call; `detail` is OpenSSL's error string, if it left one).
    case openSSL(operation: String, detail: String)
    /// A key, nonce, IV or signature had the wrong length for `kind`.
    case invalidLength(kind: String, expected: Int, actual: Int)
    /// AES-CBC ciphertext that does not decrypt to valid PKCS#7 padding (or is not a whole number of blocks).
    case badPadding

    // MARK: Encodings

    /// The input is not valid unpadded (or correctly padded) standard base64. The position is not given: the decoder
    /// is constant-time with respect to the data, and so is its error.
    case invalidBase64
    /// JSON that cannot be signed: a float that is not an integer, an integer outside ±(2^53 − 1), or invalid JSON.
    case notCanonicalJSON(reason: String)
    /// The JSON object has no signature by `entity` with `keyID`, or it is not a string.
    case missingSignature(entity: String, keyID: String)

    // MARK: Messages

    /// A message or key blob of `kind` with an unknown version byte.
    case unsupportedVersion(kind: String, version: UInt8)
    /// A message or key blob of `kind` that could not be parsed (`reason` says which field).
    case malformedMessage(kind: String, reason: String)
    /// The message authentication code did not match: the ciphertext was altered, or the wrong key was used.
    case badMAC
    /// The Ed25519 signature did not verify.
    case badSignature

    // MARK: Olm

    /// A pre-key message names a one-time (or fallback) key this account does not have (used already, or never ours).
    case unknownOneTimeKey(publicKey: String)
    /// A pre-key message came from another identity key than the caller expected.
    case identityKeyMismatch(expected: String, actual: String)
    /// A pre-key message does not belong to this session (another base key, one-time key or identity key).
    case preKeyMessageForAnotherSession
    /// An Olm message more than `limit` messages ahead of its chain.
    case messageGapTooLarge(gap: Int, limit: Int)
    /// An Olm message whose key is no longer (or was never) kept: a replay, or one too old to decrypt.
    case missingMessageKey(chainIndex: UInt32)
    /// A message on a new ratchet key arrived before this side ever sent: the peer skipped a step of the ratchet.
    case unexpectedRatchetKey

    // MARK: Megolm

    /// A Megolm message older than the first index this inbound session knows.
    case unknownMessageIndex(index: UInt32, firstKnown: UInt32)

    // MARK: Pickles

    /// A sealed record that does not open under this pickle key: the wrong key, a tampered record, or a record of
    /// another kind (`kind` is what was expected).
    case pickleNotAuthentic(kind: String)
    /// A sealed record that opened but whose contents are not a pickle of `kind` (`reason` says what is wrong).
    case malformedPickle(kind: String, reason: String)
}
