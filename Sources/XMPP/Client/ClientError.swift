import IsthmusCommon

/// Why the bridge's client (c2s) link failed. Each case says plainly what happened, for logs and for `isthmus doctor`.
public enum ClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Something kept from an earlier login that the machine authenticated with instead of the password.
    public enum KeptCredential: Sendable, Hashable {
        /// A XEP-0484 FAST token.
        case fastToken
        /// SCRAM's salted password.
        case saltedPassword
    }

    /// Which wait ran out.
    public enum Timeout: Sendable, Hashable {
        /// The whole negotiation: stream headers, STARTTLS, SASL, resume or bind, XEP-0198 enable.
        case negotiation
        /// No answer to a XEP-0199 keepalive ping: the link is dead.
        case keepalive
    }

    /// The server offers no STARTTLS on an unencrypted stream, and plaintext is not allowed (RFC 6120 §5).
    case tlsNotOffered
    /// The server answered `<starttls/>` with `<failure/>` (RFC 6120 §5.4.2.2).
    case tlsRefused
    /// The TLS handshake failed (an untrusted or wrongly named certificate, no common protocol): OpenSSL's reason.
    case tlsFailed(String)
    /// No SASL mechanism the bridge will use (none offered, or only PLAIN without TLS).
    case noUsableMechanism(SASLChoiceError)
    /// The chosen `-PLUS` mechanism needs channel-binding data the TLS connection did not provide.
    case channelBindingUnavailable(ChannelBindingType)
    /// PLAIN was chosen but the configuration holds only a cached salted password.
    case passwordRequired
    /// The SCRAM exchange failed on our side (a malformed server message, a wrong server signature, a downgrade).
    case scram(SCRAMError)
    /// The server refused the authentication: `<failure>` with this condition (RFC 6120 §6.5) and text.
    case authenticationFailed(SASLFailureCondition, text: String?)
    /// The server refused a login made with something kept from an earlier one (a FAST token it no longer trusts,
    /// XEP-0484 §5.1; a stale salted password). It is forgotten; the next attempt, at once, uses the password.
    case keptCredentialRefused(KeptCredential, SASLFailureCondition, text: String?)
    /// The FAST exchange failed on our side: the server's answer does not prove it knows the token.
    case hashedToken(HashedTokenError)
    /// SASL2 succeeded but the server asks for more (`<continue>` with these tasks, XEP-0388 §4.5.3: a second factor,
    /// a password change), which the bridge cannot do.
    case sasl2TasksRequired([String], text: String?)
    /// Resource binding was refused (RFC 6120 §7.6.2); the stanza error, when the server sent one.
    case bindFailed(StanzaError?)
    /// The server's XEP-0198 `h` counts more stanzas than we sent.
    case streamManagement(StreamManagementError)
    /// A wait ran out.
    case timeout(Timeout)
    /// The server closed the stream (`</stream:stream>`, or TCP closed without a stream error).
    case closedByServer
    /// The connection broke (reset, I/O error).
    case connectionLost(String)
    /// No TCP connection was made: each endpoint found refused or did not answer (the reason names each, in the order
    /// tried, and why), or the SRV records of the account's domain say it offers no XMPP client service.
    case unreachable(String)
    /// A stream error from the server (RFC 6120 §4.9), e.g. `conflict` when another session took our resource.
    case streamError(StreamError)
    /// The server sent something we cannot accept (bad XML, an unexpected element). We closed the stream.
    case protocolViolation(String)
    /// Not connected (never, not yet, or no longer): nothing was sent.
    case notConnected

    /// Whether the next attempt should come at once rather than after the reconnect backoff: the failure is already
    /// dealt with (what the server refused is forgotten).
    public var retriesAtOnce: Bool {
        if case .keptCredentialRefused = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .tlsNotOffered:
            "the XMPP server offers no STARTTLS and plaintext is not allowed"
        case .tlsRefused:
            "the XMPP server refused STARTTLS"
        case .tlsFailed(let reason):
            "TLS with the XMPP server failed: \(reason)"
        case .noUsableMechanism(let error):
            error.description
        case .channelBindingUnavailable(let type):
            "the TLS connection gave no \(type.rawValue) channel-binding data for the chosen -PLUS mechanism"
        case .passwordRequired:
            "the server offers only PLAIN, which needs the password, and only a salted password is configured"
        case .scram(let error):
            "SCRAM authentication failed: \(error)"
        case .authenticationFailed(let condition, let text):
            "the XMPP server refused the authentication (\(condition.rawValue))" + (text.map { ": \($0)" } ?? "")
        case .keptCredentialRefused(let kept, let condition, let text):
            "the XMPP server refused the \(kept == .fastToken ? "FAST token" : "cached salted password") (\(condition.rawValue))"
                + (text.map { ": \($0)" } ?? "") + "; trying again with the password"
        case .hashedToken(let error):
            "FAST authentication failed: \(error)"
        case .sasl2TasksRequired(let tasks, let text):
            "the XMPP server asks for more than the password (SASL2 tasks: \(tasks.isEmpty ? "none named" : tasks.joined(separator: ", ")))"
                + (text.map { ": \($0)" } ?? "") + "; the bridge cannot do them (disable them for its account)"
        case .bindFailed(let error):
            "the XMPP server refused to bind the resource" + (error.map { ": \($0)" } ?? "")
        case .streamManagement(let error):
            error.description
        case .timeout(let what):
            switch what {
            case .negotiation: "timed out negotiating the client stream"
            case .keepalive: "the XMPP server stopped answering keepalive pings"
            }
        case .closedByServer:
            "the XMPP server closed the stream"
        case .connectionLost(let reason):
            "the connection to the XMPP server was lost: \(reason)"
        case .unreachable(let reason):
            "cannot reach the XMPP server: \(reason)"
        case .streamError(let error):
            "the XMPP server closed the stream with an error: \(error)"
        case .protocolViolation(let reason):
            "the XMPP server sent something invalid: \(reason)"
        case .notConnected:
            "not connected to the XMPP server"
        }
    }
}

/// A SASL failure condition (RFC 6120 §6.5), kept as its element name so unknown ones survive.
public struct SASLFailureCondition: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The condition's element name.
    public let rawValue: String
    /// The condition with this element name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The condition with this element name.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let aborted = Self("aborted")
    public static let accountDisabled = Self("account-disabled")
    public static let credentialsExpired = Self("credentials-expired")
    public static let encryptionRequired = Self("encryption-required")
    public static let malformedRequest = Self("malformed-request")
    public static let notAuthorized = Self("not-authorized")
    public static let temporaryAuthFailure = Self("temporary-auth-failure")
}
