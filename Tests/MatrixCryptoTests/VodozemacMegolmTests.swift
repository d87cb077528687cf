import MatrixCrypto
import TestSupport
import Testing

/// Megolm and signed JSON against vodozemac 0.10.0: session keys and exports shared both ways, messages decrypted
/// both ways and out of order, tampered messages refused by both.
@Suite struct VodozemacMegolmTests {
    @Test func vodozemacDecryptsASwiftOutboundSession() throws {
        let oracle = try VodozemacOracle()
        let outbound = MegolmOutboundSession()
        _ = outbound.encrypt(Array("before sharing".utf8))
        let created = try oracle.call("inbound.new", ["name": "in", "session_key": outbound.sessionKey.base64])
        #expect(created["session_id"] as? String == outbound.sessionID)
        #expect(created["first_known_index"] as? Int == 1)
        let messages = (0..<4).map { outbound.encrypt(Array("swift \($0)".utf8)) }
        for index in [2, 0, 3, 1] {
            let answer = try oracle.call("inbound.decrypt", ["name": "in", "ciphertext": messages[index].base64])
            #expect(try UnpaddedBase64.decode(answer["plaintext"] as! String) == Array("swift \(index)".utf8))
            #expect(answer["message_index"] as? Int == index + 1)
        }
    }

    @Test func swiftDecryptsAVodozemacOutboundSession() throws {
        let oracle = try VodozemacOracle()
        let group = try oracle.call("group.new", ["name": "out"])
        let inbound = MegolmInboundSession(sessionKey: try MegolmSessionKey(base64: group["session_key"] as! String))
        #expect(inbound.sessionID == group["session_id"] as? String)
        let messages = try (0..<4).map { index in
            try MegolmMessage(base64: oracle.string("group.encrypt", ["name": "out", "plaintext": "vodozemac \(index)".base64UTF8], "ciphertext"))
        }
        for index in [3, 1, 0, 2] {
            #expect(try inbound.decrypt(messages[index]) == .init(plaintext: Array("vodozemac \(index)".utf8), messageIndex: UInt32(index)))
        }
        // Restored from its pickle, the inbound session still decrypts vodozemac's next message.
        let key = PickleKey.random()
        let restored = try MegolmInboundSession(pickle: inbound.pickle(with: key), key: key)
        let next = try MegolmMessage(base64: oracle.string("group.encrypt", ["name": "out", "plaintext": "after restore".base64UTF8], "ciphertext"))
        #expect(try restored.decrypt(next) == .init(plaintext: Array("after restore".utf8), messageIndex: 4))
        // A session key taken later starts at the sender's current index.
        let later = try MegolmSessionKey(base64: oracle.string("group.session_key", ["name": "out"], "session_key"))
        #expect(later.firstIndex == 5)
    }

    @Test func exportsCrossInBothDirections() throws {
        let oracle = try VodozemacOracle()
        // Swift session exported at index 2, imported by vodozemac.
        let outbound = MegolmOutboundSession()
        let swiftInbound = MegolmInboundSession(sessionKey: outbound.sessionKey)
        let messages = (0..<4).map { outbound.encrypt(Array("m\($0)".utf8)) }
        let exported = try #require(swiftInbound.export(at: 2))
        let imported = try oracle.call("inbound.import", ["name": "imp", "exported": exported.base64])
        #expect(imported["first_known_index"] as? Int == 2)
        #expect(try UnpaddedBase64.decode(oracle.string("inbound.decrypt", ["name": "imp", "ciphertext": messages[3].base64], "plaintext"))
            == Array("m3".utf8))
        let early = try oracle.refusal("inbound.decrypt", ["name": "imp", "ciphertext": messages[1].base64])
        #expect(early != nil)

        // vodozemac session exported at index 3, imported by Swift.
        let group = try oracle.call("group.new", ["name": "out"])
        try oracle.call("inbound.new", ["name": "in", "session_key": group["session_key"] as! String])
        let theirs = try (0..<5).map { index in
            try MegolmMessage(base64: oracle.string("group.encrypt", ["name": "out", "plaintext": "v\(index)".base64UTF8], "ciphertext"))
        }
        let theirExport = try MegolmExportedSessionKey(base64: oracle.string("inbound.export", ["name": "in", "index": 3], "exported"))
        // The exports agree byte for byte: Swift's export of the same session at the same index is identical.
        let viaSessionKey = MegolmInboundSession(sessionKey: try MegolmSessionKey(base64: group["session_key"] as! String))
        #expect(viaSessionKey.export(at: 3) == theirExport)
        let swiftImported = MegolmInboundSession(exportedKey: theirExport)
        #expect(swiftImported.firstKnownIndex == 3)
        #expect(try swiftImported.decrypt(theirs[4]).plaintext == Array("v4".utf8))
        #expect(throws: MatrixCryptoError.unknownMessageIndex(index: 2, firstKnown: 3)) { try swiftImported.decrypt(theirs[2]) }
    }

    @Test func tamperedMegolmMessagesAreRefusedOnBothSides() throws {
        let oracle = try VodozemacOracle()
        // Swift → vodozemac: ciphertext, MAC and signature each changed.
        let outbound = MegolmOutboundSession()
        try oracle.call("inbound.new", ["name": "in", "session_key": outbound.sessionKey.base64])
        let bytes = outbound.encrypt(Array("intact".utf8)).bytes
        for position in [6, bytes.count - 64 - 3, bytes.count - 10] {
            var tampered = bytes
            tampered[position] ^= 0x04
            let error = try oracle.refusal("inbound.decrypt", ["name": "in", "ciphertext": UnpaddedBase64.encode(tampered)])
            #expect(error != nil, "vodozemac accepted a message changed at byte \(position)")
        }
        #expect(try UnpaddedBase64.decode(oracle.string("inbound.decrypt", ["name": "in", "ciphertext": UnpaddedBase64.encode(bytes)], "plaintext"))
            == Array("intact".utf8))

        // vodozemac → Swift: the same three changes.
        let group = try oracle.call("group.new", ["name": "out"])
        let inbound = MegolmInboundSession(sessionKey: try MegolmSessionKey(base64: group["session_key"] as! String))
        let theirs = try UnpaddedBase64.decode(oracle.string("group.encrypt", ["name": "out", "plaintext": "theirs".base64UTF8], "ciphertext"))
        for position in [6, theirs.count - 64 - 3, theirs.count - 10] {
            var tampered = theirs
            tampered[position] ^= 0x04
            #expect(throws: MatrixCryptoError.badSignature) { try inbound.decrypt(MegolmMessage(bytes: tampered)) }
        }
        #expect(try inbound.decrypt(MegolmMessage(bytes: theirs)).plaintext == Array("theirs".utf8))
    }

    @Test func forgedSessionKeysAreRefusedOnBothSides() throws {
        let oracle = try VodozemacOracle()
        var forged = MegolmOutboundSession().sessionKey.bytes
        forged[20] ^= 1
        #expect(try oracle.refusal("inbound.new", ["name": "in", "session_key": UnpaddedBase64.encode(forged)]) != nil)
        var theirs = try UnpaddedBase64.decode(oracle.string("group.new", ["name": "out"], "session_key"))
        theirs[20] ^= 1
        #expect(throws: MatrixCryptoError.badSignature) { try MegolmSessionKey(bytes: theirs) }
    }

    @Test func signaturesOfCanonicalJSONVerifyOnBothSides() throws {
        let oracle = try VodozemacOracle()
        let json = try CanonicalJSON(parsing: Array(#"{"user_id": "@a:example.org", "device_id": "DEV", "keys": {"b": 2, "a": "日本"}, "unsigned": {"x": 1}}"#.utf8))

        // Swift signs; vodozemac verifies the signature over the canonical bytes with Swift's public key.
        let account = OlmAccount()
        let signed = try account.sign(json, userID: "@a:example.org", deviceID: "DEV")
        let signature = try signed.signature(by: "@a:example.org", keyID: "ed25519:DEV")
        let canonical = UnpaddedBase64.encode(try signed.signingBytes())
        #expect(try oracle.call("ed25519.verify", ["key": account.ed25519Key.base64, "message": canonical,
                                                   "signature": signature.base64])["valid"] as? Bool == true)
        #expect(try oracle.call("ed25519.verify", ["key": account.ed25519Key.base64, "message": UnpaddedBase64.encode(json.canonicalBytes),
                                                   "signature": signature.base64])["valid"] as? Bool == false)

        // vodozemac's account signs the canonical bytes; Swift verifies the signed object.
        let keys = try oracle.call("account.new", ["name": "acct"])
        let theirSignature = try oracle.string("account.sign", ["name": "acct", "message": canonical], "signature")
        let theirKey = try Ed25519PublicKey(base64: keys["ed25519"] as! String)
        guard case .object(var members) = json else { Issue.record("not an object"); return }
        members["signatures"] = .object(["@b:example.org": .object(["ed25519:THEIRS": .string(theirSignature)])])
        try CanonicalJSON.object(members).verifySignature(by: "@b:example.org", keyID: "ed25519:THEIRS", publicKey: theirKey)
        members["device_id"] = .string("OTHER")
        #expect(throws: MatrixCryptoError.badSignature) {
            try CanonicalJSON.object(members).verifySignature(by: "@b:example.org", keyID: "ed25519:THEIRS", publicKey: theirKey)
        }
    }
}
