import COpenSSL

/// TLS (client side) over a ``TCPConnection``, for the XMPP c2s link: STARTTLS (RFC 6120 §5) or direct TLS (XEP-0368).
///
/// Hand-written glue over OpenSSL because SwiftNIO and swift-nio-ssl are not available here; OpenSSL (Debian's, already
/// linked for digests) does the cryptography and certificate checks, this file only moves bytes. OpenSSL works on memory
/// buffers: ciphertext goes out through the connection's ``TCPConnection/write(_:)`` and comes in from its
/// ``TCPConnection/inbound``, so the connection's I/O thread and back-pressure stay as they are. The peer's certificate
/// must chain to the context's trust and name the host (`SSL_set1_host`, or the address for an IP); the host goes out
/// as SNI. TLS 1.2 at least.
///
/// Not thread-safe, except ``abort()``: OpenSSL's session and the buffer must not be used from two threads at once.
/// ``next()`` runs on its caller's executor (`nonisolated(nonsending)`), so a full-duplex owner — the client
/// connection's actor, reading in one task and writing from others — serializes every OpenSSL call on itself: no
/// OpenSSL call is in flight while ``next()`` waits for the socket.
public final class TLSStream: @unchecked Sendable {
    /// The TCP connection underneath (to abort it from a deadline timer).
    public let tcp: TCPConnection
    private var inbound: TCPInbound.AsyncIterator
    private let ssl: OpaquePointer
    private let toOpenSSL: OpaquePointer
    private let fromOpenSSL: OpaquePointer
    private var buffer = [UInt8](repeating: 0, count: 16 * 1024)

    private init(tcp: TCPConnection, inbound: TCPInbound.AsyncIterator, ssl: OpaquePointer, toOpenSSL: OpaquePointer,
                 fromOpenSSL: OpaquePointer) {
        self.tcp = tcp
        self.inbound = inbound
        self.ssl = ssl
        self.toOpenSSL = toOpenSSL
        self.fromOpenSSL = fromOpenSSL
    }

    deinit { SSL_free(ssl) }   // frees both BIOs too

    /// Direct TLS (XEP-0368): the handshake from the connection's first byte. See
    /// ``connect(over:inbound:host:context:alpn:)``.
    public static func connect(over tcp: TCPConnection, host: String, context: TLSContext,
                               alpn: [String] = []) async throws -> TLSStream {
        try await connect(over: tcp, inbound: tcp.inbound.makeAsyncIterator(), host: host, context: context, alpn: alpn)
    }

    /// Runs the handshake for `host` over `tcp`, reading ciphertext from `inbound` — for STARTTLS, the iterator that
    /// read the plaintext up to `<proceed/>` (the stream owns it from now on; do not use your copy again). `alpn`:
    /// the protocols to offer, e.g. `["xmpp-client"]`; none by default.
    ///
    /// Throws ``NetworkError/tls(_:)`` (with OpenSSL's reason, or the certificate verification error) or the
    /// connection's error; on a failed handshake the TCP connection is closed.
    public static func connect(over tcp: TCPConnection, inbound: TCPInbound.AsyncIterator, host: String, context: TLSContext,
                               alpn: [String] = []) async throws -> TLSStream {
        guard let ssl = SSL_new(context.context) else { throw NetworkError.tls(lastError("cannot create a session")) }
        guard let toOpenSSL = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw NetworkError.tls("cannot create buffers")
        }
        guard let fromOpenSSL = BIO_new(BIO_s_mem()) else {
            BIO_free(toOpenSSL)
            SSL_free(ssl)
            throw NetworkError.tls("cannot create buffers")
        }
        SSL_set_bio(ssl, toOpenSSL, fromOpenSSL)
        SSL_set_connect_state(ssl)
        let stream = TLSStream(tcp: tcp, inbound: inbound, ssl: ssl, toOpenSSL: toOpenSSL, fromOpenSSL: fromOpenSSL)
        // A name for SNI and for the certificate check; an IP address is checked as such (and sent no SNI).
        if isIPAddress(host) {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else { throw NetworkError.tls("bad address \(host)") }
        } else {
            guard isthmus_SSL_set_tlsext_host_name(ssl, host) == 1, SSL_set1_host(ssl, host) == 1 else {
                throw NetworkError.tls(lastError("bad host name \(host)"))
            }
        }
        if !alpn.isEmpty {
            // Wire format (RFC 7301 §3.1): each name prefixed by its length, 1 to 255 bytes.
            var wire: [UInt8] = []
            for name in alpn {
                let bytes = Array(name.utf8)
                guard (1...255).contains(bytes.count) else { throw NetworkError.tls("bad ALPN protocol name '\(name)'") }
                wire += [UInt8(bytes.count)] + bytes
            }
            // Unlike most of OpenSSL, 0 means success here.
            guard SSL_set_alpn_protos(ssl, wire, UInt32(wire.count)) == 0 else { throw NetworkError.tls(lastError("cannot offer ALPN")) }
        }
        do {
            try await stream.handshake(host: host)
        } catch {
            tcp.close()
            throw error
        }
        return stream
    }

    private func handshake(host: String) async throws {
        while true {
            ERR_clear_error()
            let result = SSL_do_handshake(ssl)
            let error = SSL_get_error(ssl, result)
            let reason = result == 1 ? "" : Self.lastError("handshake with \(host) failed")   // before any await
            try flush()   // our next flight, or the alert
            if result == 1 { return }
            switch error {
            case SSL_ERROR_WANT_READ:
                guard try await receive() else { throw NetworkError.tls("the server closed the connection during the handshake") }
            default:
                let verify = SSL_get_verify_result(ssl)
                if verify != X509_V_OK {
                    throw NetworkError.tls("certificate of \(host) not accepted: \(String(cString: X509_verify_cert_error_string(verify)))")
                }
                throw NetworkError.tls(reason)
            }
        }
    }

    /// The protocol the server chose by ALPN; nil when it chose none (or none was offered).
    public var negotiatedALPN: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// The negotiated protocol version as OpenSSL names it, e.g. `TLSv1.3` (for logs).
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// `tls-exporter` channel-binding data (RFC 9266): 32 bytes exported with label `EXPORTER-Channel-Binding` and no
    /// context. nil unless the session is TLS 1.3, or TLS 1.2 with the extended master secret (RFC 7627), without
    /// which the binding is not unique to the connection.
    public func exporterChannelBinding() -> [UInt8]? {
        let version = SSL_version(ssl)
        guard version == TLS1_3_VERSION || (version == TLS1_2_VERSION && isthmus_SSL_get_extms_support(ssl) == 1) else { return nil }
        let label = "EXPORTER-Channel-Binding"
        var output = [UInt8](repeating: 0, count: 32)
        let result = label.withCString { label in
            SSL_export_keying_material(ssl, &output, output.count, label, strlen(label), nil, 0, 0)
        }
        return result == 1 ? output : nil
    }

    /// `tls-server-end-point` channel-binding data (RFC 5929 §4.1): the hash of the server certificate (DER) with the
    /// hash function of its signature algorithm, SHA-256 instead of MD5 or SHA-1. nil when that is undefined — no
    /// certificate, or a signature algorithm without a separate digest (Ed25519, Ed448).
    public func serverEndPointChannelBinding() -> [UInt8]? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        var digestNID: Int32 = NID_undef
        var keyNID: Int32 = NID_undef
        guard OBJ_find_sigid_algs(X509_get_signature_nid(certificate), &digestNID, &keyNID) == 1, digestNID != NID_undef else {
            return nil
        }
        if digestNID == NID_md5 || digestNID == NID_sha1 { digestNID = NID_sha256 }
        guard let digest = isthmus_EVP_get_digestbynid(digestNID) else { return nil }
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, digest, &output, &length) == 1 else { return nil }
        return Array(output.prefix(Int(length)))
    }

    /// Encrypts `plaintext` and queues it on the connection.
    public func write(_ plaintext: [UInt8]) throws(NetworkError) {
        var offset = 0
        while offset < plaintext.count {
            ERR_clear_error()
            let written = plaintext.withUnsafeBytes { raw in
                SSL_write(ssl, raw.baseAddress! + offset, Int32(min(raw.count - offset, Int(Int32.max))))
            }
            guard written > 0 else { throw .tls(Self.lastError("write failed")) }
            offset += Int(written)
        }
        try flush()
    }

    /// The next decrypted bytes; nil when the server closed the stream.
    public nonisolated(nonsending) func next() async throws -> [UInt8]? {
        while true {
            ERR_clear_error()
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
    private func flush() throws(NetworkError) {
        while BIO_ctrl_pending(fromOpenSSL) > 0 {
            let count = buffer.withUnsafeMutableBytes { BIO_read(fromOpenSSL, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { break }
            try tcp.write(Array(buffer[0..<Int(count)]))
        }
    }

    /// Feeds the next ciphertext chunk from the connection to OpenSSL; false at the end of the stream.
    private nonisolated(nonsending) func receive() async throws -> Bool {
        guard let chunk = try await inbound.next() else { return false }
        let written = chunk.withUnsafeBytes { BIO_write(toOpenSSL, $0.baseAddress, Int32($0.count)) }
        guard written == Int32(chunk.count) else { throw NetworkError.tls("cannot buffer received data") }
        return true
    }

    /// `what`, with OpenSSL's reason for the last failure on this thread when it has one (the queue is cleared).
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
