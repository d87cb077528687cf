@testable import MatrixCrypto
import Testing

/// Sealed pickles: each kind restores to the same state and keeps working; a wrong key, an altered byte, a record of
/// another kind or a cut record is refused.
@Suite struct PickleTests {
    let key = PickleKey.random()

    @Test func accountRoundTripsAndStillCreatesSessions() throws {
        let account = OlmAccount()
        account.generateOneTimeKeys(count: 3)
        account.markKeysAsPublished()
        account.generateOneTimeKeys(count: 2)
        account.generateFallbackKey()
        account.generateFallbackKey()
        let restored = try OlmAccount(pickle: account.pickle(with: key), key: key)
        #expect(restored.identityKey == account.identityKey && restored.signingKey == account.signingKey)
        #expect(restored.oneTimeKeys == account.oneTimeKeys && restored.nextKeyID == account.nextKeyID)
        #expect(restored.fallbackKey == account.fallbackKey && restored.previousFallbackKey == account.previousFallbackKey)
        #expect(restored.unpublishedOneTimeKeys == account.unpublishedOneTimeKeys)

        let oneTimeKey = try #require(account.unpublishedOneTimeKeys.values.first)
        let alice = try OlmAccount().createOutboundSession(theirIdentityKey: restored.curve25519Key, theirOneTimeKey: oneTimeKey)
        guard case .preKey(let preKey) = try alice.encrypt(Array("to the restored account".utf8)) else { Issue.record("not pre-key"); return }
        #expect(try restored.createInboundSession(theirIdentityKey: nil, message: preKey).plaintext == Array("to the restored account".utf8))
    }

    @Test func olmSessionsRoundTripOnBothSidesAndKeepTalking() throws {
        let (alice, bob, _) = try OlmTests.pair()
        let pending = try bob.encrypt(Array("sent before the restart".utf8))
        _ = try alice.decrypt(try bob.encrypt(Array("skips one".utf8)))  // leaves a skipped key for `pending`
        let restoredAlice = try OlmSession(pickle: alice.pickle(with: key), key: key)
        let restoredBob = try OlmSession(pickle: bob.pickle(with: key), key: key)
        #expect(restoredAlice.ratchet == alice.ratchet && restoredAlice.sessionKeys == alice.sessionKeys)
        #expect(restoredBob.ratchet == bob.ratchet && restoredBob.sessionKeys == bob.sessionKeys)
        #expect(!restoredAlice.ratchet.skippedKeys.isEmpty && restoredBob.ratchet.senderChain != nil)
        #expect(try restoredAlice.decrypt(pending) == Array("sent before the restart".utf8))
        #expect(try restoredBob.decrypt(restoredAlice.encrypt(Array("after".utf8))) == Array("after".utf8))
        #expect(try restoredAlice.decrypt(restoredBob.encrypt(Array("and back".utf8))) == Array("and back".utf8))
    }

    @Test func megolmSessionsRoundTripAndKeepDecrypting() throws {
        let outbound = MegolmOutboundSession()
        let inbound = MegolmInboundSession(sessionKey: outbound.sessionKey)
        let early = outbound.encrypt(Array("early".utf8))
        _ = try inbound.decrypt(outbound.encrypt(Array("later".utf8)))
        let restoredOut = try MegolmOutboundSession(pickle: outbound.pickle(with: key), key: key)
        let restoredIn = try MegolmInboundSession(pickle: inbound.pickle(with: key), key: key)
        #expect(restoredOut.ratchet == outbound.ratchet && restoredOut.signingKey == outbound.signingKey)
        #expect(restoredIn.initialRatchet == inbound.initialRatchet && restoredIn.latestRatchet == inbound.latestRatchet)
        #expect(restoredIn.signingKey == inbound.signingKey && restoredIn.isSigningKeyVerified)
        #expect(try restoredIn.decrypt(early).plaintext == Array("early".utf8))
        let next = restoredOut.encrypt(Array("next".utf8))
        #expect(next.messageIndex == 2)
        #expect(try restoredIn.decrypt(next).plaintext == Array("next".utf8))
        #expect(try inbound.decrypt(next).plaintext == Array("next".utf8))
    }

    @Test func eachSealUsesAFreshNonce() {
        let session = MegolmOutboundSession()
        let first = session.pickle(with: key), second = session.pickle(with: key)
        #expect(first != second)
        #expect(Array(first[1..<13]) != Array(second[1..<13]))
    }

    @Test func wrongKeyIsRefused() throws {
        let record = OlmAccount().pickle(with: key)
        #expect(throws: MatrixCryptoError.pickleNotAuthentic(kind: "olm-account")) {
            try OlmAccount(pickle: record, key: PickleKey.random())
        }
        #expect(throws: MatrixCryptoError.invalidLength(kind: "pickle key", expected: 32, actual: 31)) {
            try PickleKey(bytes: [UInt8](repeating: 0, count: 31))
        }
    }

    @Test func everyAlteredByteIsRefused() throws {
        let record = MegolmInboundSession(sessionKey: MegolmOutboundSession().sessionKey).pickle(with: key)
        for position in 1..<record.count {
            var tampered = record
            tampered[position] ^= 0x40
            #expect(throws: MatrixCryptoError.pickleNotAuthentic(kind: "megolm-inbound-session")) {
                try MegolmInboundSession(pickle: tampered, key: key)
            }
        }
        var version = record
        version[0] = 9
        #expect(throws: MatrixCryptoError.unsupportedVersion(kind: "megolm-inbound-session pickle", version: 9)) {
            try MegolmInboundSession(pickle: version, key: key)
        }
        #expect(throws: MatrixCryptoError.pickleNotAuthentic(kind: "megolm-inbound-session")) {
            try MegolmInboundSession(pickle: Array(record.dropLast()), key: key)
        }
    }

    @Test func aRecordOfAnotherKindIsRefused() throws {
        let outbound = MegolmOutboundSession().pickle(with: key)
        #expect(throws: MatrixCryptoError.pickleNotAuthentic(kind: "megolm-inbound-session")) {
            try MegolmInboundSession(pickle: outbound, key: key)
        }
        let (alice, _, _) = try OlmTests.pair()
        #expect(throws: MatrixCryptoError.pickleNotAuthentic(kind: "olm-account")) {
            try OlmAccount(pickle: alice.pickle(with: key), key: key)
        }
    }
}
