import Foundation
import IsthmusCommon

/// The hash of a SCRAM mechanism: SHA-1 (RFC 5802) or SHA-256 (RFC 7677).
public enum SCRAMHash: Sendable, Hashable {
    case sha1, sha256

    /// The SASL mechanism name (RFC 5802 §4, RFC 7677 §2): `SCRAM-SHA-1` or `SCRAM-SHA-256`, with `-PLUS` when the
    /// exchange uses channel binding.
    public func mechanismName(plus: Bool) -> String {
        let base = switch self {
        case .sha1: "SCRAM-SHA-1"
        case .sha256: "SCRAM-SHA-256"
        }
        return plus ? base + "-PLUS" : base
    }

    var digest: Digest.Algorithm {
        switch self {
        case .sha1: .sha1
        case .sha256: .sha256
        }
    }
}

/// The client side of one SCRAM exchange (RFC 5802 §5, §7; RFC 7677), with XEP-0474 downgrade protection. A value
/// without I/O: the caller sends `clientFirst()`, feeds each server message to `receive`, and sends what it returns.
/// Any thrown error ends the exchange; later calls throw `.unexpectedMessage`.
///
/// Not implemented: an authorization identity (`a=`), SASLprep of the password (it is used as its UTF-8 bytes, which
/// matches the server for any password SASLprep leaves unchanged, such as printable ASCII).
public struct SCRAMClient: Sendable {
    /// SaltedPassword of RFC 5802 §3 with the parameters that produced it. Caching it lets the bridge authenticate
    /// again without keeping the password, for as long as the server keeps the same salt and iteration count.
    public struct SaltedPassword: Sendable, Hashable {
        public var hash: SCRAMHash
        public var salt: [UInt8]
        public var iterations: Int
        /// Hi(password, salt, iterations): as many bytes as `hash` outputs.
        public var bytes: [UInt8]

        public init(hash: SCRAMHash, salt: [UInt8], iterations: Int, bytes: [UInt8]) {
            self.hash = hash
            self.salt = salt
            self.iterations = iterations
            self.bytes = bytes
        }

        /// Whether it was made for these server parameters (and has the hash's length).
        func fits(hash: SCRAMHash, salt: [UInt8], iterations: Int) -> Bool {
            self.hash == hash && self.salt == salt && self.iterations == iterations && bytes.count == hash.digest.length
        }
    }

    /// What proves the user's identity.
    public enum Credential: Sendable, Hashable {
        case password(String)
        /// A cached salted password. If the server's salt, iteration count or hash differ, `receive(serverFirst:)`
        /// throws `.cachedCredentialMismatch` and the caller must authenticate again with the password.
        case salted(SaltedPassword)
    }

    private enum State: Sendable {
        case awaitingServerFirst
        case awaitingServerFinal(serverSignature: [UInt8], salted: SaltedPassword)
        case authenticated(SaltedPassword)
        case failed
    }

    /// The iteration counts accepted by default. The floor is RFC 7677 §4's "at least 4096": a MITM that sends a
    /// lower count gets a proof it can brute-force more cheaply. The ceiling bounds the time one server message can
    /// make the client spend in PBKDF2.
    public static let defaultAcceptedIterations = 4096...1_000_000

    public let hash: SCRAMHash
    public let binding: ChannelBinding
    /// Server iteration counts outside this range are refused with `.iterationCountRefused`.
    public let acceptedIterations: ClosedRange<Int>
    private let credential: Credential
    private let cached: SaltedPassword?
    private let offer: SASLOffer?
    private let nonce: String
    private let clientFirstBare: String
    private var state = State.awaitingServerFirst
    /// Whether server-first carried XEP-0474's `h=` and it matched the offer given at init. False when the server
    /// sent no `h=` or no offer was given: nothing was checked.
    public private(set) var downgradeProtectionVerified = false
    /// Whether the exchange used the cached salted password given at init (the server's salt, iteration count and hash
    /// matched it) instead of deriving one from the password.
    public private(set) var usedCachedSaltedPassword = false

    /// Starts an exchange. `nonce` must be fresh for each exchange (see `randomNonce()`); `offer`, when given, is
    /// checked against server-first's XEP-0474 `h=`; `cached`: a salted password from an earlier success, used
    /// instead of the credential when the server asks for the same hash, salt and iteration count (no PBKDF2). Throws `.invalidUsername` for an empty name or one with NUL,
    /// `.invalidClientNonce` for a nonce that is empty or not printable ASCII without `,`.
    public init(hash: SCRAMHash, username: String, credential: Credential, cached: SaltedPassword? = nil,
                binding: ChannelBinding = .notSupported, nonce: String, offer: SASLOffer? = nil,
                acceptedIterations: ClosedRange<Int> = SCRAMClient.defaultAcceptedIterations) throws(SCRAMError) {
        guard !username.isEmpty, !username.utf8.contains(0) else { throw .invalidUsername }
        guard !nonce.isEmpty, nonce.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: ",") }) else {
            throw .invalidClientNonce
        }
        self.hash = hash
        self.binding = binding
        self.acceptedIterations = acceptedIterations
        self.credential = credential
        self.cached = cached
        self.offer = offer
        self.nonce = nonce
        self.clientFirstBare = "n=\(Self.escaped(username)),r=\(nonce)"
    }

    /// The mechanism to name in `<auth mechanism=…>`: `-PLUS` exactly when the exchange is channel-bound.
    public var mechanismName: String {
        if case .bound = binding { return hash.mechanismName(plus: true) }
        return hash.mechanismName(plus: false)
    }

    /// client-first-message: GS2 header + `n=<user>,r=<nonce>` (RFC 5802 §7).
    public func clientFirst() -> [UInt8] {
        Array((binding.gs2Header + clientFirstBare).utf8)
    }

    /// Checks server-first and returns client-final (`c=…,r=…,p=<proof>`). Refuses a message out of order, a mandatory
    /// extension (`m=`), a server nonce that does not extend ours, an iteration count outside `acceptedIterations`, a
    /// cached salted password for other parameters, and an `h=` that does not match the offer. Runs PBKDF2 when the
    /// credential is a password.
    public mutating func receive(serverFirst message: [UInt8]) throws(SCRAMError) -> [UInt8] {
        guard case .awaitingServerFirst = state else { throw .unexpectedMessage }
        state = .failed
        let serverFirst = try ServerFirst(message)
        guard serverFirst.nonce.utf8.count > nonce.utf8.count, serverFirst.nonce.utf8.starts(with: nonce.utf8) else {
            throw .nonceMismatch
        }
        guard acceptedIterations.contains(serverFirst.iterations) else {
            throw .iterationCountRefused(serverFirst.iterations, accepted: acceptedIterations)
        }
        if let offeredHash = serverFirst.downgradeHash, let offer {
            guard offeredHash == Digest.hash(hash.digest, offer.downgradeProtectionInput) else { throw .downgradeDetected }
            downgradeProtectionVerified = true
        }
        let salted: SaltedPassword
        if let cached, cached.fits(hash: hash, salt: serverFirst.salt, iterations: serverFirst.iterations) {
            salted = cached
            usedCachedSaltedPassword = true
        } else {
            switch credential {
            case .password(let password):
                salted = SaltedPassword(hash: hash, salt: serverFirst.salt, iterations: serverFirst.iterations,
                                        bytes: Digest.pbkdf2(password: Array(password.utf8), salt: serverFirst.salt,
                                                             iterations: serverFirst.iterations, hash: hash.digest))
            case .salted(let configured):
                guard configured.fits(hash: hash, salt: serverFirst.salt, iterations: serverFirst.iterations) else {
                    throw .cachedCredentialMismatch
                }
                salted = configured
            }
        }
        let withoutProof = "c=\(binding.channelBindingAttribute),r=\(serverFirst.nonce)"
        let authMessage = Array("\(clientFirstBare),\(serverFirst.text),\(withoutProof)".utf8)
        let clientKey = Digest.hmac(hash.digest, key: salted.bytes, message: Array("Client Key".utf8))
        let storedKey = Digest.hash(hash.digest, clientKey)
        let clientSignature = Digest.hmac(hash.digest, key: storedKey, message: authMessage)
        let proof = zip(clientKey, clientSignature).map { $0 ^ $1 }
        let serverKey = Digest.hmac(hash.digest, key: salted.bytes, message: Array("Server Key".utf8))
        let serverSignature = Digest.hmac(hash.digest, key: serverKey, message: authMessage)
        state = .awaitingServerFinal(serverSignature: serverSignature, salted: salted)
        return Array("\(withoutProof),p=\(Data(proof).base64EncodedString())".utf8)
    }

    /// Checks server-final: `v=` must equal the server signature (compared in constant time); `e=` becomes
    /// `.serverError`. Returns normally only when the server proved it knows the credential.
    public mutating func receive(serverFinal message: [UInt8]) throws(SCRAMError) {
        guard case .awaitingServerFinal(let expected, let salted) = state else { throw .unexpectedMessage }
        state = .failed
        guard let text = String(validating: message, as: UTF8.self) else { throw .malformedServerMessage(.notUTF8) }
        let first = text.split(separator: ",", omittingEmptySubsequences: false)[0]
        if let value = Self.value(of: "e", in: first) { throw .serverError(SCRAMError.ServerErrorValue(value)) }
        guard let value = Self.value(of: "v", in: first) else { throw .malformedServerMessage(.missingVerifier) }
        guard let signature = Self.base64Decoded(value) else { throw .malformedServerMessage(.invalidVerifier) }
        guard Digest.constantTimeEqual(signature, expected) else { throw .serverSignatureMismatch }
        state = .authenticated(salted)
    }

    /// Whether the server's signature was verified.
    public var isAuthenticated: Bool {
        if case .authenticated = state { return true }
        return false
    }

    /// The salted password to cache, once the server's signature was verified; `nil` before that or after a failure.
    public var saltedPassword: SaltedPassword? {
        if case .authenticated(let salted) = state { return salted }
        return nil
    }

    /// 36 hex characters from OpenSSL's CSPRNG: a nonce for `init`.
    public static func randomNonce() -> String {
        Digest.randomHex(bytes: 18)
    }

    /// The name as `saslname` (RFC 5802 §5.1): `=` becomes `=3D` and `,` becomes `=2C`.
    static func escaped(_ username: String) -> String {
        username.replacingOccurrences(of: "=", with: "=3D").replacingOccurrences(of: ",", with: "=2C")
    }

    /// The value of attribute `key` in `field` (`key=value`), or nil if `field` is another attribute.
    fileprivate static func value(of key: Character, in field: Substring) -> Substring? {
        guard field.count >= 2, field.first == key, field.dropFirst().first == "=" else { return nil }
        return field.dropFirst(2)
    }

    fileprivate static func base64Decoded(_ value: Substring) -> [UInt8]? {
        guard !value.isEmpty, let data = Data(base64Encoded: String(value)) else { return nil }
        return Array(data)
    }
}

/// server-first-message, parsed: `[m=…,]r=<nonce>,s=<salt>,i=<count>[,extensions]` (RFC 5802 §7).
private struct ServerFirst {
    let text: String
    let nonce: Substring
    let salt: [UInt8]
    let iterations: Int
    /// XEP-0474's `h=`, decoded.
    let downgradeHash: [UInt8]?

    init(_ message: [UInt8]) throws(SCRAMError) {
        guard let text = String(validating: message, as: UTF8.self) else { throw .malformedServerMessage(.notUTF8) }
        let fields = text.split(separator: ",", omittingEmptySubsequences: false)
        if SCRAMClient.value(of: "m", in: fields[0]) != nil { throw .unsupportedMandatoryExtension }
        guard fields.count >= 3, let nonce = SCRAMClient.value(of: "r", in: fields[0]) else {
            throw .malformedServerMessage(.missingNonce)
        }
        guard !nonce.isEmpty, nonce.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .malformedServerMessage(.invalidNonce)
        }
        guard let salt = SCRAMClient.value(of: "s", in: fields[1]) else { throw .malformedServerMessage(.missingSalt) }
        guard let saltBytes = SCRAMClient.base64Decoded(salt) else { throw .malformedServerMessage(.invalidSalt) }
        guard let count = SCRAMClient.value(of: "i", in: fields[2]) else {
            throw .malformedServerMessage(.missingIterationCount)
        }
        guard count.first != "0", count.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let iterations = Int(count) else {
            throw .malformedServerMessage(.invalidIterationCount)
        }
        var downgradeHash: [UInt8]?
        for field in fields.dropFirst(3) {
            guard let key = field.first, key.isASCII, key.isLetter, field.dropFirst().first == "=" else {
                throw .malformedServerMessage(.invalidExtension)
            }
            if let value = SCRAMClient.value(of: "h", in: field) {
                guard let decoded = SCRAMClient.base64Decoded(value) else {
                    throw .malformedServerMessage(.invalidDowngradeHash)
                }
                downgradeHash = decoded
            }
        }
        self.text = text
        self.nonce = nonce
        self.salt = saltBytes
        self.iterations = iterations
        self.downgradeHash = downgradeHash
    }
}

/// Why a SCRAM exchange failed. Each case says plainly what happened, for logs and for `isthmus doctor`.
public enum SCRAMError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which part of a server message could not be read.
    public enum Malformation: Sendable, Hashable {
        case notUTF8, missingNonce, invalidNonce, missingSalt, invalidSalt, missingIterationCount, invalidIterationCount
        case invalidExtension, invalidDowngradeHash, missingVerifier, invalidVerifier
    }

    /// The `e=` value of server-final (RFC 5802 §7, `server-error-value`).
    public enum ServerErrorValue: Sendable, Hashable {
        case invalidEncoding, extensionsNotSupported, invalidProof, channelBindingsDontMatch
        case serverDoesSupportChannelBinding, channelBindingNotSupported, unsupportedChannelBindingType
        case unknownUser, invalidUsernameEncoding, noResources, otherError
        /// A value RFC 5802 does not define; the RFC says to treat it as `other-error`.
        case unrecognized(String)

        private static let wireValues: [(String, ServerErrorValue)] = [
            ("invalid-encoding", .invalidEncoding), ("extensions-not-supported", .extensionsNotSupported),
            ("invalid-proof", .invalidProof), ("channel-bindings-dont-match", .channelBindingsDontMatch),
            ("server-does-support-channel-binding", .serverDoesSupportChannelBinding),
            ("channel-binding-not-supported", .channelBindingNotSupported),
            ("unsupported-channel-binding-type", .unsupportedChannelBindingType), ("unknown-user", .unknownUser),
            ("invalid-username-encoding", .invalidUsernameEncoding), ("no-resources", .noResources),
            ("other-error", .otherError),
        ]

        init(_ value: Substring) {
            self = Self.wireValues.first { $0.0 == value }?.1 ?? .unrecognized(String(value))
        }

        /// The value as the server sent it (`invalid-proof`).
        public var wireValue: String {
            if case .unrecognized(let value) = self { return value }
            return Self.wireValues.first { $0.1 == self }!.0
        }
    }

    /// The user name given to `init` is empty or contains NUL.
    case invalidUsername
    /// The nonce given to `init` is empty or has a character outside printable ASCII, or a comma.
    case invalidClientNonce
    /// A message arrived when the exchange was not waiting for it (or had already failed or finished).
    case unexpectedMessage
    /// A server message does not follow RFC 5802's grammar.
    case malformedServerMessage(Malformation)
    /// server-first starts with `m=`: the server requires an extension this client does not know.
    case unsupportedMandatoryExtension
    /// The server's nonce does not start with ours or adds nothing to it.
    case nonceMismatch
    /// The server's iteration count is outside the accepted range.
    case iterationCountRefused(Int, accepted: ClosedRange<Int>)
    /// The cached salted password was made for another hash, salt or iteration count.
    case cachedCredentialMismatch
    /// XEP-0474: the server's hash of what it advertised differs from what we received: someone altered the offer.
    case downgradeDetected
    /// server-final's `v=` is not the signature that the credential gives: the server does not know it.
    case serverSignatureMismatch
    /// The server ended the exchange with `e=`.
    case serverError(ServerErrorValue)

    public var description: String {
        switch self {
        case .invalidUsername: "the user name is empty or contains a NUL character"
        case .invalidClientNonce: "the client nonce is empty or has characters other than printable ASCII without commas"
        case .unexpectedMessage: "a SCRAM message arrived out of order"
        case .malformedServerMessage(let part): "the server's SCRAM message is malformed (\(part))"
        case .unsupportedMandatoryExtension: "the server requires a SCRAM extension (m=) that Isthmus does not support"
        case .nonceMismatch: "the server's nonce does not extend the client's: the message is not an answer to ours"
        case .iterationCountRefused(let count, let accepted):
            "the server asks for \(count) PBKDF2 iterations, outside the accepted \(accepted.lowerBound)…\(accepted.upperBound)"
        case .cachedCredentialMismatch:
            "the server's salt or iteration count changed since the salted password was cached: the password is needed"
        case .downgradeDetected:
            "the server's list of mechanisms and channel-binding types differs from the one received: possible downgrade attack"
        case .serverSignatureMismatch: "the server's signature is wrong: it does not know the credential (possible impostor)"
        case .serverError(let value): "the server refused the authentication: \(value.wireValue)"
        }
    }
}
