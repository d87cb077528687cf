import COpenSSL

/// Whom a TLS client trusts, and the protocol floor (TLS 1.2). Create one and share it; thread-safe once made.
public final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer

    /// `caFile`: trust only the PEM certificates in this file (a private CA, tests). nil: the system's CA store —
    /// OpenSSL's defaults, which honour `SSL_CERT_FILE` and `SSL_CERT_DIR`.
    public init(caFile: String? = nil) throws(NetworkError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw .tls(TLSStream.lastError("cannot create a context")) }
        self.context = context
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        guard isthmus_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw .tls(TLSStream.lastError("cannot require TLS 1.2"))
        }
        if let caFile {
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw .tls(TLSStream.lastError("cannot load CA file \(caFile)"))
            }
        } else if SSL_CTX_set_default_verify_paths(context) != 1 {
            throw .tls(TLSStream.lastError("cannot load the system's CA certificates"))
        }
    }

    deinit { SSL_CTX_free(context) }
}

/// TLS (client side) over a ``TCPConnection``. OpenSSL works on memory buffers here: ciphertext goes out through
/// the connection's ``TCPConnection/write(_:)`` and comes in from its ``TCPConnection/inbound``, so the connection's
/// I/O thread and back-pressure stay as they are. The peer's certificate must chain to the context's trust and name
/// the host (`SSL_set1_host`); the host goes out as SNI.
///
/// Used by one task at a time (an HTTP connection from a pool): not thread-safe, except ``abort()``.
public final class TLSStream: @unchecked Sendable {
    /// The TCP connection underneath (to abort it from a deadline timer).
    public let tcp: TCPConnection
    private var inbound: TCPInbound.AsyncIterator
    private let ssl: OpaquePointer
    private let toOpenSSL: OpaquePointer
    private let fromOpenSSL: OpaquePointer
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)

    private init(tcp: TCPConnection, ssl: OpaquePointer, toOpenSSL: OpaquePointer, fromOpenSSL: OpaquePointer) {
        self.tcp = tcp
        self.ssl = ssl
        self.toOpenSSL = toOpenSSL
        self.fromOpenSSL = fromOpenSSL
        inbound = tcp.inbound.makeAsyncIterator()
    }

    deinit { SSL_free(ssl) }   // frees both BIOs too

    /// Runs the handshake for `host` over `tcp`. Throws ``NetworkError/tls(_:)`` (with OpenSSL's reason, e.g. the
    /// certificate verification error) or the connection's error.
    public static func connect(over tcp: TCPConnection, host: String, context: TLSContext) async throws -> TLSStream {
        guard let ssl = SSL_new(context.context) else { throw NetworkError.tls(lastError("cannot create a session")) }
        guard let toOpenSSL = BIO_new(BIO_s_mem()), let fromOpenSSL = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw NetworkError.tls("cannot create buffers")
        }
        SSL_set_bio(ssl, toOpenSSL, fromOpenSSL)
        SSL_set_connect_state(ssl)
        let stream = TLSStream(tcp: tcp, ssl: ssl, toOpenSSL: toOpenSSL, fromOpenSSL: fromOpenSSL)
        // A name for SNI and for the certificate check; an IP address is checked as such.
        if isIPAddress(host) {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else { throw NetworkError.tls("bad address \(host)") }
        } else {
            guard isthmus_SSL_set_tlsext_host_name(ssl, host) == 1, SSL_set1_host(ssl, host) == 1 else {
                throw NetworkError.tls(lastError("bad host name \(host)"))
            }
        }
        while true {
            let result = SSL_do_handshake(ssl)
            try stream.flush()
            if result == 1 { return stream }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ:
                guard try await stream.receive() else { throw NetworkError.tls("the server closed the connection during the handshake") }
            default:
                let verify = SSL_get_verify_result(ssl)
                if verify != X509_V_OK {
                    throw NetworkError.tls("certificate of \(host) not accepted: \(String(cString: X509_verify_cert_error_string(verify)))")
                }
                throw NetworkError.tls(lastError("handshake with \(host) failed"))
            }
        }
    }

    /// Encrypts `plaintext` and queues it on the connection.
    public func write(_ plaintext: [UInt8]) throws {
        var offset = 0
        while offset < plaintext.count {
            let written = plaintext.withUnsafeBytes { raw in
                SSL_write(ssl, raw.baseAddress! + offset, Int32(min(raw.count - offset, Int(Int32.max))))
            }
            guard written > 0 else { throw NetworkError.tls(Self.lastError("write failed")) }
            offset += Int(written)
        }
        try flush()
    }

    /// The next decrypted bytes; nil when the server closed the stream.
    public func next() async throws -> [UInt8]? {
        while true {
            let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 { return Array(buffer[0..<Int(count)]) }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ:
                try flush()   // e.g. a key update to answer
                guard try await receive() else { return nil }
            case SSL_ERROR_ZERO_RETURN:
                return nil
            default:
                throw NetworkError.tls(Self.lastError("read failed"))
            }
        }
    }

    /// Closes the TCP connection at once.
    public func abort() { tcp.abort() }

    /// Moves ciphertext OpenSSL produced onto the connection.
    private func flush() throws {
        while BIO_ctrl_pending(fromOpenSSL) > 0 {
            let count = buffer.withUnsafeMutableBytes { BIO_read(fromOpenSSL, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { break }
            try tcp.write(Array(buffer[0..<Int(count)]))
        }
    }

    /// Feeds the next ciphertext chunk from the connection to OpenSSL; false at the end of the stream.
    private func receive() async throws -> Bool {
        guard let chunk = try await inbound.next() else { return false }
        let written = chunk.withUnsafeBytes { BIO_write(toOpenSSL, $0.baseAddress, Int32($0.count)) }
        guard written == Int32(chunk.count) else { throw NetworkError.tls("cannot buffer received data") }
        return true
    }

    static func lastError(_ what: String) -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return what }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return "\(what): \(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))"
    }

    private static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || (!host.isEmpty && host.allSatisfy { $0.isNumber || $0 == "." })
    }
}
