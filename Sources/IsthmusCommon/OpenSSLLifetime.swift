private import COpenSSL

/// OpenSSL's process-wide state, kept until the process is gone.
///
/// By default OpenSSL frees its global state in an `atexit` handler (`OPENSSL_cleanup`). A thread that used libcrypto
/// (the store's thread through libpq's TLS, an I/O thread, libcurl's) runs OpenSSL's thread-exit destructor when it
/// ends; if that happens while the main thread is in `exit`, the destructor reads freed state and the process dies
/// with SIGSEGV or a "double free or corruption" abort after "Isthmus stopped" (seen in CI, in libcrypto on the
/// `isthmus-store` thread). A C program whose detached threads call `RAND_bytes` and end while `main` exits crashed
/// 19 times in 1,500 runs here with the handler and never without it. Nothing is gained by freeing memory the kernel
/// reclaims anyway, so the bridge asks OpenSSL not to register that handler.
public enum OpenSSLLifetime {
    /// Initialises libcrypto without its exit-time cleanup. Call first in `main`, before anything else touches
    /// OpenSSL (libcurl, libpq, TLS): only the first initialisation decides whether the handler is registered.
    public static func keepUntilProcessExit() {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}
