@testable import MatrixCrypto
import Testing

/// Olm sessions between two Swift accounts: setup, the double ratchet, out-of-order delivery and refusals.
@Suite struct OlmTests {
    /// Alice's outbound session to Bob and Bob's inbound session from her first message.
    static func pair(firstPlaintext: String = "hello") throws -> (alice: OlmSession, bob: OlmSession, bobAccount: OlmAccount) {
        let aliceAccount = OlmAccount(), bobAccount = OlmAccount()
        bobAccount.generateOneTimeKeys(count: 1)
        let oneTimeKey = try #require(bobAccount.unpublishedOneTimeKeys.values.first)
        let alice = try aliceAccount.createOutboundSession(theirIdentityKey: bobAccount.curve25519Key, theirOneTimeKey: oneTimeKey)
        guard case .preKey(let preKey) = try alice.encrypt(Array(firstPlaintext.utf8)) else {
            throw MatrixCryptoError.malformedMessage(kind: "test", reason: "first message is not a pre-key message")
        }
        let created = try bobAccount.createInboundSession(theirIdentityKey: aliceAccount.curve25519Key, message: preKey)
        #expect(created.plaintext == Array(firstPlaintext.utf8))
        return (alice, created.session, bobAccount)
    }

    @Test func preKeyMessagesUntilTheFirstReplyThenNormal() throws {
        let (alice, bob, bobAccount) = try Self.pair()
        #expect(alice.sessionID == bob.sessionID)
        #expect(bobAccount.unpublishedOneTimeKeys.isEmpty)  // the one-time key was consumed
        let second = try alice.encrypt(Array("again".utf8))
        #expect(second.type == 0)
        guard case .preKey(let preKey) = second else { return }
        #expect(bob.matches(preKey))
        #expect(try bob.decrypt(second) == Array("again".utf8))
        let reply = try bob.encrypt(Array("hi".utf8))
        #expect(reply.type == 1)
        #expect(try alice.decrypt(OlmMessage(type: reply.type, body: reply.body)) == Array("hi".utf8))
        #expect(alice.hasReceivedMessage)
        #expect(try alice.encrypt(Array("now normal".utf8)).type == 1)
    }

    @Test func manyRoundsOutOfOrderAcrossRatchetSteps() throws {
        let (alice, bob, _) = try Self.pair()
        for round in 0..<4 {
            let fromBob = try (0..<3).map { try bob.encrypt(Array("b\(round).\($0)".utf8)) }
            for index in [2, 0, 1] { #expect(try alice.decrypt(fromBob[index]) == Array("b\(round).\(index)".utf8)) }
            let fromAlice = try (0..<3).map { try alice.encrypt(Array("a\(round).\($0)".utf8)) }
            for index in [1, 2, 0] { #expect(try bob.decrypt(fromAlice[index]) == Array("a\(round).\(index)".utf8)) }
        }
    }

    @Test func aMessageFromAnOldChainStillDecryptsOnce() throws {
        let (alice, bob, _) = try Self.pair()
        let late = try bob.encrypt(Array("late".utf8))
        let first = try bob.encrypt(Array("first".utf8))
        #expect(try alice.decrypt(first) == Array("first".utf8))
        // Alice replies (new ratchet key); Bob answers on a new chain; then the late message of the old chain arrives.
        #expect(try bob.decrypt(alice.encrypt(Array("reply".utf8))) == Array("reply".utf8))
        #expect(try alice.decrypt(bob.encrypt(Array("new chain".utf8))) == Array("new chain".utf8))
        #expect(try alice.decrypt(late) == Array("late".utf8))
        #expect(throws: MatrixCryptoError.missingMessageKey(chainIndex: 0)) { try alice.decrypt(late) }
        #expect(throws: MatrixCryptoError.missingMessageKey(chainIndex: 1)) { try alice.decrypt(first) }
    }

    @Test func tamperedMessagesAreRefusedAndChangeNothing() throws {
        let (alice, bob, _) = try Self.pair()
        let message = try bob.encrypt(Array("secret".utf8))
        let before = alice.ratchet
        for position in [message.bytes.count - 1, message.bytes.count - 12] {
            var bytes = message.bytes
            bytes[position] ^= 1
            #expect(throws: MatrixCryptoError.badMAC) { try alice.decrypt(.normal(OlmNormalMessage(bytes: bytes))) }
        }
        #expect(alice.ratchet == before)
        #expect(try alice.decrypt(message) == Array("secret".utf8))
    }

    @Test func aGapBeyondTheLimitIsRefused() throws {
        let (alice, bob, _) = try Self.pair()
        for _ in 0..<(OlmRatchet.maxMessageGap + 1) { _ = try bob.encrypt([0]) }
        let far = try bob.encrypt(Array("far".utf8))
        #expect(throws: MatrixCryptoError.messageGapTooLarge(gap: OlmRatchet.maxMessageGap + 1, limit: OlmRatchet.maxMessageGap)) {
            try alice.decrypt(far)
        }
    }

    @Test func skippedKeysAreBounded() throws {
        let (alice, bob, _) = try Self.pair()
        let messages = try (0..<60).map { try bob.encrypt(Array("m\($0)".utf8)) }
        #expect(try alice.decrypt(messages[59]) == Array("m59".utf8))
        #expect(alice.ratchet.skippedKeys.count == OlmRatchet.maxSkippedKeys)
        #expect(throws: MatrixCryptoError.missingMessageKey(chainIndex: 0)) { try alice.decrypt(messages[0]) }
        #expect(try alice.decrypt(messages[58]) == Array("m58".utf8))
    }

    @Test func preKeyMessageRefusals() throws {
        let aliceAccount = OlmAccount(), bobAccount = OlmAccount(), mallory = OlmAccount()
        bobAccount.generateOneTimeKeys(count: 2)
        let keys = Array(bobAccount.unpublishedOneTimeKeys.values)
        let alice = try aliceAccount.createOutboundSession(theirIdentityKey: bobAccount.curve25519Key, theirOneTimeKey: keys[0])
        guard case .preKey(let preKey) = try alice.encrypt(Array("x".utf8)) else { Issue.record("not pre-key"); return }
        #expect(throws: MatrixCryptoError.identityKeyMismatch(expected: mallory.curve25519Key.base64, actual: aliceAccount.curve25519Key.base64)) {
            try bobAccount.createInboundSession(theirIdentityKey: mallory.curve25519Key, message: preKey)
        }
        #expect(throws: MatrixCryptoError.unknownOneTimeKey(publicKey: keys[0].base64)) {
            try mallory.createInboundSession(theirIdentityKey: nil, message: preKey)
        }
        let created = try bobAccount.createInboundSession(theirIdentityKey: nil, message: preKey)
        #expect(bobAccount.storedOneTimeKeyCount == 1)
        // The one-time key is gone: the same pre-key message cannot create a second session.
        #expect(throws: MatrixCryptoError.unknownOneTimeKey(publicKey: keys[0].base64)) {
            try bobAccount.createInboundSession(theirIdentityKey: nil, message: preKey)
        }
        // A pre-key message of another session is refused by this one.
        let other = try aliceAccount.createOutboundSession(theirIdentityKey: bobAccount.curve25519Key, theirOneTimeKey: keys[1])
        guard case .preKey(let otherPreKey) = try other.encrypt([1]) else { Issue.record("not pre-key"); return }
        #expect(!created.session.matches(otherPreKey))
        #expect(throws: MatrixCryptoError.preKeyMessageForAnotherSession) { try created.session.decrypt(.preKey(otherPreKey)) }
    }

    @Test func fallbackKeyServesSeveralSessionsAndRotates() throws {
        let bobAccount = OlmAccount()
        bobAccount.generateFallbackKey()
        let fallback = try #require(bobAccount.unpublishedFallbackKey.values.first)
        bobAccount.markKeysAsPublished()
        #expect(bobAccount.unpublishedFallbackKey.isEmpty)
        for _ in 0..<2 {
            let alice = try OlmAccount().createOutboundSession(theirIdentityKey: bobAccount.curve25519Key, theirOneTimeKey: fallback)
            guard case .preKey(let preKey) = try alice.encrypt(Array("f".utf8)) else { Issue.record("not pre-key"); return }
            #expect(try bobAccount.createInboundSession(theirIdentityKey: nil, message: preKey).plaintext == Array("f".utf8))
        }
        bobAccount.generateFallbackKey()
        let alice = try OlmAccount().createOutboundSession(theirIdentityKey: bobAccount.curve25519Key, theirOneTimeKey: fallback)
        guard case .preKey(let preKey) = try alice.encrypt([2]) else { Issue.record("not pre-key"); return }
        #expect(try bobAccount.createInboundSession(theirIdentityKey: nil, message: preKey).plaintext == [2])
        #expect(bobAccount.forgetPreviousFallbackKey())
        #expect(throws: MatrixCryptoError.unknownOneTimeKey(publicKey: fallback.base64)) {
            try bobAccount.createInboundSession(theirIdentityKey: nil, message: preKey)
        }
    }

    @Test func oneTimeKeysAreBoundedAndPublishedOnce() {
        let account = OlmAccount()
        account.generateOneTimeKeys(count: 3)
        #expect(account.unpublishedOneTimeKeys.count == 3)
        #expect(account.unpublishedOneTimeKeys.keys.sorted() == ["AAAAAAAAAAA", "AAAAAAAAAAE", "AAAAAAAAAAI"])
        account.markKeysAsPublished()
        #expect(account.unpublishedOneTimeKeys.isEmpty)
        account.generateOneTimeKeys(count: OlmAccount.maxOneTimeKeys)
        #expect(account.storedOneTimeKeyCount == OlmAccount.maxOneTimeKeys)
        #expect(account.unpublishedOneTimeKeys.count == OlmAccount.maxOneTimeKeys)
    }

    @Test func wireFormatIsLibolms() throws {
        let (alice, bob, _) = try Self.pair()
        let reply = try bob.encrypt(Array("x".utf8)).bytes
        #expect(Array(reply.prefix(3)) == [3, 0x0A, 32])  // version 3, field 1 (bytes) of 32: the ratchet key
        #expect(Array(reply[35...37]) == [0x10, 0, 0x22])  // field 2 (varint) chain index 0, field 4 (bytes)
        #expect(Int(reply[38]) == 16 && reply.count == 39 + 16 + 8)  // one AES block and the 8-byte MAC
        guard case .preKey(let preKey) = try alice.encrypt([1]) else { Issue.record("not pre-key"); return }
        #expect(Array(preKey.bytes.prefix(3)) == [3, 0x0A, 32])
        #expect(preKey.bytes[35] == 0x12 && preKey.bytes[69] == 0x1A && preKey.bytes[103] == 0x22)
        #expect(try OlmPreKeyMessage(bytes: preKey.bytes) == preKey)
    }

    @Test func accountSignsJSONThatVerifies() throws {
        let account = OlmAccount()
        let keys = CanonicalJSON.object(["user_id": .string("@a:x"), "device_id": .string("D"),
                                         "algorithms": .array([.string("m.olm.v1.curve25519-aes-sha2")])])
        let signed = try account.sign(keys, userID: "@a:x", deviceID: "D")
        try signed.verifySignature(by: "@a:x", keyID: "ed25519:D", publicKey: account.ed25519Key)
        #expect(account.ed25519Key.isValidSignature(account.sign([1, 2]), of: [1, 2]))
    }
}
