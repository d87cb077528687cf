import Foundation
import MatrixCrypto
import Testing

/// Unpadded base64 and canonical JSON (Matrix spec appendices).
@Suite struct EncodingTests {
    @Test func base64RoundTripsEveryLengthAndByte() throws {
        #expect(UnpaddedBase64.encode(Array("".utf8)) == "")
        #expect(UnpaddedBase64.encode(Array("f".utf8)) == "Zg")
        #expect(UnpaddedBase64.encode(Array("fo".utf8)) == "Zm8")
        #expect(UnpaddedBase64.encode(Array("foo".utf8)) == "Zm9v")
        #expect(UnpaddedBase64.encode(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(UnpaddedBase64.encode([0xfb, 0xff, 0xbf]) == "+/+/")
        let all = (0...255).map { UInt8($0) }
        for length in 0..<all.count {
            let bytes = Array(all[0..<length].reversed())
            #expect(try UnpaddedBase64.decode(UnpaddedBase64.encode(bytes)) == bytes)
        }
    }

    @Test func base64AcceptsPaddingAndRefusesInvalidInput() throws {
        #expect(try UnpaddedBase64.decode("Zm8") == Array("fo".utf8))
        #expect(try UnpaddedBase64.decode("Zm8=") == Array("fo".utf8))
        #expect(try UnpaddedBase64.decode("Zg==") == Array("f".utf8))
        for bad in ["Zm9v!", "Z", "Zm9vY", "Zm-v", "Zm_v", "Zm9 v", "Zh", "Zm9=", "Zm8==", "=Zm8", "Zé8"] {
            #expect(throws: MatrixCryptoError.invalidBase64, "\(bad)") { try UnpaddedBase64.decode(bad) }
        }
    }

    @Test(arguments: [
        ("{}", "{}"),
        (#"{"one": 1, "two": "Two"}"#, #"{"one":1,"two":"Two"}"#),
        (#"{"b": "2", "a": "1"}"#, #"{"a":"1","b":"2"}"#),
        (#"{"b":"2","a":"1"}"#, #"{"a":"1","b":"2"}"#),
        (#"{"auth": {"success": true, "mxid": "@john.doe:example.com", "profile": {"display_name": "John Doe", "three_pids": [{"medium": "email", "address": "john.doe@example.org"}, {"medium": "msisdn", "address": "123456789"}]}}}"#,
         #"{"auth":{"mxid":"@john.doe:example.com","profile":{"display_name":"John Doe","three_pids":[{"address":"john.doe@example.org","medium":"email"},{"address":"123456789","medium":"msisdn"}]},"success":true}}"#),
        (#"{"a": "日本語"}"#, #"{"a":"日本語"}"#),
        (#"{"本": 2, "日": 1}"#, #"{"日":1,"本":2}"#),
        (#"{"a": "\u65E5"}"#, #"{"a":"日"}"#),
        (#"{"a": null}"#, #"{"a":null}"#),
        (#"{"a": -0, "b": 1e10}"#, #"{"a":0,"b":10000000000}"#),
    ])
    func canonicalJSONMatchesTheSpecAppendix(input: String, expected: String) throws {
        #expect(try CanonicalJSON(parsing: Array(input.utf8)).canonicalString == expected)
    }

    @Test func canonicalJSONEscapesOnlyWhatJSONRequires() throws {
        let value = CanonicalJSON.object(["k": .string("a\"b\\c\n\t\u{01}\u{1f}é/\u{7f}")])
        #expect(value.canonicalString == "{\"k\":\"a\\\"b\\\\c\\n\\t\\u0001\\u001fé/\u{7f}\"}")
    }

    @Test func canonicalJSONSortsKeysByCodePoint() {
        // U+FFFD sorts before U+1F600 by code point (and by UTF-8 bytes), though UTF-16 would put the emoji first.
        let value = CanonicalJSON.object(["\u{1F600}": .integer(1), "\u{FFFD}": .integer(2), "z": .integer(3), "Z": .integer(4)])
        #expect(value.canonicalString == "{\"Z\":4,\"z\":3,\"\u{FFFD}\":2,\"\u{1F600}\":1}")
    }

    @Test func canonicalJSONRefusesFloatsAndOutOfRangeIntegers() {
        for bad in [#"{"a": 1.5}"#, #"{"a": 9007199254740992}"#, #"{"a": [1, 0.1]}"#, "{", #"{"a": 1e300}"#] {
            #expect(throws: MatrixCryptoError.self, "\(bad)") { try CanonicalJSON(parsing: Array(bad.utf8)) }
        }
        #expect(throws: Never.self) { try CanonicalJSON(parsing: Array(#"{"a": 9007199254740991, "b": -9007199254740991}"#.utf8)) }
    }

    @Test func signedJSONVerifiesAndExcludesSignaturesAndUnsigned() throws {
        let key = try Ed25519SecretKey(seed: [UInt8](repeating: 1, count: 32))
        let object = try CanonicalJSON(parsing: Array(#"{"name": "example.org", "unsigned": {"age_ts": 922834800000}}"#.utf8))
        let signed = try object.signed(by: "example.org", keyID: "ed25519:1", with: key)
        try signed.verifySignature(by: "example.org", keyID: "ed25519:1", publicKey: key.publicKey)
        #expect(try signed.signingBytes() == Array(#"{"name":"example.org"}"#.utf8))
        #expect(try signed.signature(by: "example.org", keyID: "ed25519:1") == key.sign(Array(#"{"name":"example.org"}"#.utf8)))
        // Changing `unsigned` keeps the signature valid; changing a signed member does not.
        guard case .object(var members) = signed else { Issue.record("not an object"); return }
        members["unsigned"] = .object(["other": .bool(true)])
        try CanonicalJSON.object(members).verifySignature(by: "example.org", keyID: "ed25519:1", publicKey: key.publicKey)
        members["name"] = .string("example.com")
        #expect(throws: MatrixCryptoError.badSignature) {
            try CanonicalJSON.object(members).verifySignature(by: "example.org", keyID: "ed25519:1", publicKey: key.publicKey)
        }
        #expect(throws: MatrixCryptoError.missingSignature(entity: "other", keyID: "ed25519:1")) {
            try signed.verifySignature(by: "other", keyID: "ed25519:1", publicKey: key.publicKey)
        }
    }

    @Test func specSigningExampleVerifies() throws {
        // Matrix spec, Appendices, "Signing JSON" example: the key with seed all zeros ("YJDBA9Xnr2sVqXD9Vj7XVUnmFZcZrlw8Md7kMW+3XA1")
        // signs {} as "K8280/U9SSy9IVtjBuVeLr+HpOB4BQFWbg+UZaADMtTdGYI7Geitb76LTrr5QV/7Xg4ahLwYGYZzuHGZKM5ZAQ".
        // The seed's last character carries non-zero leftover bits, which UnpaddedBase64 refuses (one encoding per
        // byte string), so it is decoded here by Foundation, which ignores them as Synapse's Python does.
        #expect(throws: MatrixCryptoError.invalidBase64) { try UnpaddedBase64.decode("YJDBA9Xnr2sVqXD9Vj7XVUnmFZcZrlw8Md7kMW+3XA1") }
        let seed = try #require(Data(base64Encoded: "YJDBA9Xnr2sVqXD9Vj7XVUnmFZcZrlw8Md7kMW+3XA1="))
        let key = try Ed25519SecretKey(seed: Array(seed))
        let signed = try CanonicalJSON.object([:]).signed(by: "domain", keyID: "ed25519:1", with: key)
        #expect(try signed.signature(by: "domain", keyID: "ed25519:1").base64
            == "K8280/U9SSy9IVtjBuVeLr+HpOB4BQFWbg+UZaADMtTdGYI7Geitb76LTrr5QV/7Xg4ahLwYGYZzuHGZKM5ZAQ")
    }
}
