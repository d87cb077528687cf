import MatrixCrypto
import TestSupport
import Testing

/// Olm against vodozemac 0.10.0: each side creates the inbound session from the other's pre-key message, then
/// normal messages flow both ways, out of order, across ratchet steps.
@Suite struct VodozemacOlmTests {
    /// Bytes the oracle returned in base64.
    static func bytes(_ text: String) throws -> [UInt8] { try UnpaddedBase64.decode(text) }

    /// A Swift account (alice) and its outbound session to the oracle's new account "bob", on one of bob's one-time keys.
    func outboundToOracleBob(_ oracle: VodozemacOracle) throws -> (OlmAccount, OlmSession) {
        let bobKeys = try oracle.call("account.new", ["name": "bob"])
        let otks = try #require(try oracle.call("account.one_time_keys", ["name": "bob", "count": 1])["keys"] as? [String: String])
        let alice = OlmAccount()
        let session = try alice.createOutboundSession(
            theirIdentityKey: Curve25519PublicKey(base64: bobKeys["curve25519"] as! String),
            theirOneTimeKey: Curve25519PublicKey(base64: try #require(otks.values.first)))
        return (alice, session)
    }

    @Test func swiftInitiatesAndVodozemacAnswers() throws {
        let oracle = try VodozemacOracle()
        let (alice, session) = try outboundToOracleBob(oracle)
        let first = try session.encrypt(Array("first from swift".utf8))
        #expect(first.type == 0)
        let created = try oracle.call("account.inbound", ["name": "bob", "session": "s", "identity_key": alice.curve25519Key.base64,
                                                          "type": first.type, "body": first.body])
        #expect(created["session_id"] as? String == session.sessionID)
        #expect(try Self.bytes(created["plaintext"] as! String) == Array("first from swift".utf8))

        // A second pre-key message (no reply yet) matches vodozemac's session and decrypts there.
        let second = try session.encrypt(Array("second".utf8))
        #expect(try oracle.call("session.matches", ["session": "s", "type": second.type, "body": second.body])["matches"] as? Bool == true)
        #expect(try Self.bytes(oracle.string("session.decrypt", ["session": "s", "type": second.type, "body": second.body], "plaintext"))
            == Array("second".utf8))

        try converse(swift: session, oracle: oracle, oracleSession: "s", rounds: 3)

        // A session restored from its pickle keeps talking to vodozemac.
        let key = PickleKey.random()
        try converse(swift: OlmSession(pickle: session.pickle(with: key), key: key), oracle: oracle, oracleSession: "s", rounds: 1)
    }

    @Test func vodozemacInitiatesAndSwiftAnswers() throws {
        let oracle = try VodozemacOracle()
        let aliceKeys = try oracle.call("account.new", ["name": "alice"])
        let bob = OlmAccount()
        bob.generateOneTimeKeys(count: 2)
        let oneTimeKey = try #require(bob.unpublishedOneTimeKeys.sorted { $0.key < $1.key }.first?.value)
        bob.markKeysAsPublished()
        let sessionID = try oracle.string("account.outbound", ["name": "alice", "session": "s", "identity_key": bob.curve25519Key.base64,
                                                               "one_time_key": oneTimeKey.base64], "session_id")
        let first = try oracle.call("session.encrypt", ["session": "s", "plaintext": "first from vodozemac".base64UTF8])
        #expect(first["type"] as? Int == 0)
        let message = try OlmMessage(type: first["type"] as! Int, body: first["body"] as! String)
        guard case .preKey(let preKey) = message else { Issue.record("not a pre-key message"); return }
        #expect(preKey.sessionID == sessionID)
        let created = try bob.createInboundSession(
            theirIdentityKey: Curve25519PublicKey(base64: aliceKeys["curve25519"] as! String), message: preKey)
        #expect(created.plaintext == Array("first from vodozemac".utf8))
        #expect(created.session.sessionID == sessionID)
        #expect(bob.storedOneTimeKeyCount == 1)

        let second = try oracle.call("session.encrypt", ["session": "s", "plaintext": "second".base64UTF8])
        guard case .preKey(let secondPreKey) = try OlmMessage(type: second["type"] as! Int, body: second["body"] as! String) else {
            Issue.record("second message is not a pre-key message"); return
        }
        #expect(created.session.matches(secondPreKey))
        #expect(try created.session.decrypt(.preKey(secondPreKey)) == Array("second".utf8))

        try converse(swift: created.session, oracle: oracle, oracleSession: "s", rounds: 3)
    }

    @Test func vodozemacUsesASwiftFallbackKey() throws {
        let oracle = try VodozemacOracle()
        let aliceKeys = try oracle.call("account.new", ["name": "alice"])
        let bob = OlmAccount()
        bob.generateFallbackKey()
        let fallback = try #require(bob.unpublishedFallbackKey.values.first)
        try oracle.call("account.outbound", ["name": "alice", "session": "s", "identity_key": bob.curve25519Key.base64,
                                             "one_time_key": fallback.base64])
        let first = try oracle.call("session.encrypt", ["session": "s", "plaintext": "via fallback".base64UTF8])
        guard case .preKey(let preKey) = try OlmMessage(type: first["type"] as! Int, body: first["body"] as! String) else {
            Issue.record("not a pre-key message"); return
        }
        let created = try bob.createInboundSession(theirIdentityKey: Curve25519PublicKey(base64: aliceKeys["curve25519"] as! String),
                                                   message: preKey)
        #expect(created.plaintext == Array("via fallback".utf8))
        try converse(swift: created.session, oracle: oracle, oracleSession: "s", rounds: 1)
    }

    @Test func tamperedOlmMessagesAreRefusedOnBothSides() throws {
        let oracle = try VodozemacOracle()
        let (alice, session) = try outboundToOracleBob(oracle)
        let first = try session.encrypt(Array("hello".utf8))
        try oracle.call("account.inbound", ["name": "bob", "session": "s", "identity_key": alice.curve25519Key.base64,
                                            "type": first.type, "body": first.body])

        // vodozemac → Swift, tampered in the ciphertext and in the MAC.
        let reply = try oracle.call("session.encrypt", ["session": "s", "plaintext": "reply".base64UTF8])
        let replyBytes = try UnpaddedBase64.decode(reply["body"] as! String)
        for position in [replyBytes.count - 12, replyBytes.count - 1] {
            var bytes = replyBytes
            bytes[position] ^= 0x20
            #expect(throws: MatrixCryptoError.badMAC) { try session.decrypt(.normal(OlmNormalMessage(bytes: bytes))) }
        }
        #expect(try session.decrypt(OlmMessage(type: 1, body: reply["body"] as! String)) == Array("reply".utf8))

        // Swift → vodozemac, tampered likewise.
        let normal = try session.encrypt(Array("back".utf8))
        #expect(normal.type == 1)
        for position in [normal.bytes.count - 12, normal.bytes.count - 1] {
            var bytes = normal.bytes
            bytes[position] ^= 0x20
            let error = try oracle.refusal("session.decrypt", ["session": "s", "type": 1, "body": UnpaddedBase64.encode(bytes)])
            #expect(error?.contains("MAC") == true, "\(error ?? "accepted")")
        }
        #expect(try Self.bytes(oracle.string("session.decrypt", ["session": "s", "type": 1, "body": normal.body], "plaintext"))
            == Array("back".utf8))
    }

    /// `rounds` exchanges: vodozemac sends three messages that Swift decrypts out of order, then Swift sends three
    /// that vodozemac decrypts out of order (each round is a new ratchet step on both sides).
    private func converse(swift: OlmSession, oracle: VodozemacOracle, oracleSession: String, rounds: Int) throws {
        for round in 0..<rounds {
            let fromOracle = try (0..<3).map { index in
                let answer = try oracle.call("session.encrypt", ["session": oracleSession, "plaintext": "v\(round).\(index)".base64UTF8])
                return try OlmMessage(type: answer["type"] as! Int, body: answer["body"] as! String)
            }
            for index in [2, 0, 1] {
                #expect(try swift.decrypt(fromOracle[index]) == Array("v\(round).\(index)".utf8))
            }
            let fromSwift = try (0..<3).map { try swift.encrypt(Array("s\(round).\($0)".utf8)) }
            for message in fromSwift { #expect(message.type == 1) }
            for index in [1, 2, 0] {
                let plaintext = try oracle.string("session.decrypt", ["session": oracleSession, "type": fromSwift[index].type,
                                                                      "body": fromSwift[index].body], "plaintext")
                #expect(try Self.bytes(plaintext) == Array("s\(round).\(index)".utf8))
            }
        }
    }
}
