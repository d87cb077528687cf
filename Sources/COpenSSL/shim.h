#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

/* Macros in OpenSSL's headers, as functions Swift can call. */
static inline long isthmus_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
static inline int isthmus_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long isthmus_SSL_get_extms_support(SSL *ssl) {
    return SSL_get_extms_support(ssl);
}
static inline const EVP_MD *isthmus_EVP_get_digestbynid(int nid) {
    return EVP_get_digestbynid(nid);
}
