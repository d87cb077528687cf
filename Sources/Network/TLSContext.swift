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
