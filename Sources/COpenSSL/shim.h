#ifndef INTACT_COPENSSL_SHIM_H
#define INTACT_COPENSSL_SHIM_H
// OpenSSL 3 headers, plus header-only shims for what Swift cannot import.
// Every shim is `static inline`, prefixed `intact_`, and grouped under a
// comment that says why it exists (a function-like macro, a variadic call).
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/bio.h>
#include <openssl/rand.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/asn1.h>
#include <openssl/sha.h>

// ---- Hashing module (Sources/Hashing): one-shot SHA-256 ----
// A message head takes a dozen small digests (one per field name). Through
// EVP each costs an EVP_MD_CTX allocation and provider dispatch; the
// low-level functions run the same assembly on a context on the stack. They
// are deprecated in OpenSSL 3 (in favour of EVP) but kept; the warning is
// silenced here, for this one use only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline void intact_sha256_oneshot(const void *bytes, size_t count, unsigned char *digest) {
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, bytes, count);
    SHA256_Final(digest, &context);
    OPENSSL_cleanse(&context, sizeof context);
}
#pragma GCC diagnostic pop

// ---- TLS module (Sources/TLS): contexts, engines, identities ----
// OpenSSL spells these as function-like macros over SSL_CTX_ctrl / SSL_ctrl /
// SSL_CTX_callback_ctrl (or, for the option bit, a macro with an argument),
// which Swift cannot import.

static inline int intact_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

static inline int intact_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}

static inline long intact_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

static inline long intact_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

static inline long intact_SSL_CTX_sess_set_cache_size(SSL_CTX *ctx, long size) {
    return SSL_CTX_sess_set_cache_size(ctx, size);
}

static inline int intact_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *certificate) {
    return (int)SSL_CTX_add1_chain_cert(ctx, certificate);
}

static inline int intact_SSL_add1_chain_cert(SSL *ssl, X509 *certificate) {
    return (int)SSL_add1_chain_cert(ssl, certificate);
}

static inline int intact_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

typedef int (*intact_servername_callback)(SSL *ssl, int *alert, void *arg);

static inline long intact_SSL_CTX_set_tlsext_servername_callback(SSL_CTX *ctx, intact_servername_callback callback) {
    return SSL_CTX_set_tlsext_servername_callback(ctx, callback);
}

static inline uint64_t intact_SSL_OP_NO_RENEGOTIATION(void) {
    return SSL_OP_NO_RENEGOTIATION;
}

// RFC 2253 distinguished names, but with UTF-8 kept as UTF-8 rather than
// escaped byte by byte; a compound macro Swift does not import.
static inline unsigned long intact_XN_FLAG_RFC2253_UTF8(void) {
    return XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB;
}
// ---- end TLS module ----

#endif
