/// Signing JSON (Matrix spec, Appendices, "Signing JSON"): the signature covers the canonical form of the object
/// without its `signatures` and `unsigned` members, and is stored at `signatures[entity][keyID]` in unpadded base64.
/// `entity` is a user id or server name; `keyID` is `algorithm:name`, e.g. `ed25519:DEVICEID`. Pure functions.
extension CanonicalJSON {
    /// The bytes a signature of this object covers: its canonical form without `signatures` and `unsigned`.
    /// Throws `notCanonicalJSON` when this is not an object.
    public func signingBytes() throws -> [UInt8] {
        guard case .object(var members) = self else {
            throw MatrixCryptoError.notCanonicalJSON(reason: "only a JSON object can be signed")
        }
        members["signatures"] = nil
        members["unsigned"] = nil
        return CanonicalJSON.object(members).canonicalBytes
    }

    /// This object with `key`'s signature added under `signatures[entity][keyID]`, keeping the other signatures (and
    /// `unsigned`, which the signature does not cover).
    public func signed(by entity: String, keyID: String, with key: Ed25519SecretKey) throws -> CanonicalJSON {
        let signature = key.sign(try signingBytes())
        guard case .object(var members) = self else { preconditionFailure("signingBytes accepted a non-object") }
        var signatures = members["signatures"]?.objectMembers ?? [:]
        var ofEntity = signatures[entity]?.objectMembers ?? [:]
        ofEntity[keyID] = .string(signature.base64)
        signatures[entity] = .object(ofEntity)
        members["signatures"] = .object(signatures)
        return .object(members)
    }

    /// The members when this is an object.
    var objectMembers: [String: CanonicalJSON]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The signature of `entity` with `keyID`; throws `missingSignature` when there is none (or it is not valid
    /// base64 of 64 bytes).
    public func signature(by entity: String, keyID: String) throws -> Ed25519Signature {
        guard case .string(let text)? = self["signatures"]?[entity]?[keyID],
              let signature = try? Ed25519Signature(base64: text)
        else { throw MatrixCryptoError.missingSignature(entity: entity, keyID: keyID) }
        return signature
    }

    /// Throws unless this object carries a valid signature by `publicKey` under `signatures[entity][keyID]`:
    /// `missingSignature` when there is none, `badSignature` when it does not verify.
    public func verifySignature(by entity: String, keyID: String, publicKey: Ed25519PublicKey) throws {
        let signature = try signature(by: entity, keyID: keyID)
        try publicKey.verify(signature, of: try signingBytes())
    }
}
