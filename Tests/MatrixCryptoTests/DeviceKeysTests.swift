import MatrixCrypto
import TestSupport
import Testing

/// What a ghost's device publishes: device keys, one-time and fallback keys, and cross-signing keys, each signed as
/// the spec says (client-server API §11.12.2), checked here and by vodozemac.
@Suite struct DeviceKeysTests {
    let user = "@xmpp_alice=40example.org:localhost"
    let device = "ISTHMUSABC"

    @Test func deviceKeysNameTheDeviceAndAreSignedByItsFingerprintKey() throws {
        let account = OlmAccount()
        let keys = try account.deviceKeys(userID: user, deviceID: device)
        #expect(keys["user_id"] == .string(user))
        #expect(keys["device_id"] == .string(device))
        #expect(keys["algorithms"] == .array([.string("m.olm.v1.curve25519-aes-sha2"), .string("m.megolm.v1.aes-sha2")]))
        #expect(keys["keys"]?["curve25519:\(device)"] == .string(account.curve25519Key.base64))
        #expect(keys["keys"]?["ed25519:\(device)"] == .string(account.ed25519Key.base64))
        try keys.verifySignature(by: user, keyID: "ed25519:\(device)", publicKey: account.ed25519Key)
        // Another device's key does not verify it.
        #expect(throws: MatrixCryptoError.self) {
            try keys.verifySignature(by: user, keyID: "ed25519:\(device)", publicKey: OlmAccount().ed25519Key)
        }
    }

    @Test func oneTimeAndFallbackKeysAreSignedAndOnlyTheUnpublishedOnesAreListed() throws {
        let account = OlmAccount()
        account.generateOneTimeKeys(count: 3)
        account.generateFallbackKey()
        let oneTime = try account.signedOneTimeKeys(userID: user, deviceID: device)
        let fallback = try account.signedFallbackKey(userID: user, deviceID: device)
        #expect(oneTime.count == 3)
        #expect(fallback.count == 1)
        for (id, key) in oneTime.merging(fallback, uniquingKeysWith: { first, _ in first }) {
            #expect(id.hasPrefix("signed_curve25519:"))
            try key.verifySignature(by: user, keyID: "ed25519:\(device)", publicKey: account.ed25519Key)
        }
        #expect(fallback.values.first?["fallback"] == .bool(true))
        #expect(oneTime.values.allSatisfy { $0["fallback"] == nil })
        account.markKeysAsPublished()
        #expect(try account.signedOneTimeKeys(userID: user, deviceID: device).isEmpty)
        #expect(try account.signedFallbackKey(userID: user, deviceID: device).isEmpty)
    }

    @Test func crossSigningChainsMasterToSelfSigningToDeviceAndVodozemacAgrees() throws {
        let keys = CrossSigningKeys()
        let account = OlmAccount()
        let master = keys.masterKey(userID: user)
        let selfSigning = try keys.selfSigningKey(userID: user)
        let userSigning = try keys.userSigningKey(userID: user)
        #expect(master["usage"] == .array([.string("master")]))
        #expect(selfSigning["usage"] == .array([.string("self_signing")]))
        #expect(userSigning["usage"] == .array([.string("user_signing")]))
        let masterID = CrossSigningKeys.keyID(keys.master.publicKey)
        #expect(master["keys"]?[masterID] == .string(keys.master.publicKey.base64))
        try selfSigning.verifySignature(by: user, keyID: masterID, publicKey: keys.master.publicKey)
        try userSigning.verifySignature(by: user, keyID: masterID, publicKey: keys.master.publicKey)

        let device = try account.deviceKeys(userID: user, deviceID: self.device)
        let signed = try keys.signDevice(device, userID: user)
        let selfSigningID = CrossSigningKeys.keyID(keys.selfSigning.publicKey)
        try signed.verifySignature(by: user, keyID: selfSigningID, publicKey: keys.selfSigning.publicKey)
        // The device's own signature stays beside the new one.
        try signed.verifySignature(by: user, keyID: "ed25519:\(self.device)", publicKey: account.ed25519Key)

        let oracle = try VodozemacOracle()
        for (object, keyID, key) in [(selfSigning, masterID, keys.master.publicKey), (signed, selfSigningID, keys.selfSigning.publicKey)] {
            let signature = try object.signature(by: user, keyID: keyID)
            #expect(try oracle.call("ed25519.verify", ["key": key.base64, "message": UnpaddedBase64.encode(try object.signingBytes()),
                                                       "signature": signature.base64])["valid"] as? Bool == true)
        }
    }

    @Test func crossSigningKeysSurviveTheirPickleAndRefuseAnotherKey() throws {
        let keys = CrossSigningKeys()
        let pickleKey = PickleKey.random()
        let record = keys.pickle(with: pickleKey)
        #expect(try CrossSigningKeys(pickle: record, key: pickleKey) == keys)
        #expect(throws: MatrixCryptoError.self) { try CrossSigningKeys(pickle: record, key: PickleKey.random()) }
        // An account's pickle is not a cross-signing record, under the same key.
        #expect(throws: MatrixCryptoError.self) { try CrossSigningKeys(pickle: OlmAccount().pickle(with: pickleKey), key: pickleKey) }
    }
}

/// The operator's pickle secret and the key it gives.
@Suite struct PickleSecretTests {
    @Test func theSameSecretOpensWhatItSealedAndAnotherDoesNot() throws {
        let secret = "a secret of at least thirty-two characters"
        let record = CrossSigningKeys().pickle(with: PickleKey(secret: secret))
        #expect(throws: Never.self) { try CrossSigningKeys(pickle: record, key: PickleKey(secret: secret)) }
        #expect(throws: MatrixCryptoError.self) { try CrossSigningKeys(pickle: record, key: PickleKey(secret: secret + "!")) }
    }
}
