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
#include <openssl/buffer.h>
#include <openssl/rand.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/asn1.h>
#include <openssl/sha.h>
#include <string.h>

// ---- Hashing module (Sources/Hashing): one-shot SHA-256 ----
// A message head takes a dozen small digests (one per field name). Through
// EVP each costs an EVP_MD_CTX allocation and provider dispatch; the
// low-level functions run the same assembly on a context on the stack. They
// are deprecated in OpenSSL 3 (in favour of EVP) but kept; the warning is
// silenced here, for this one use only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
// Wipes a digest state that held message or key-derived bytes when it is
// done with. explicit_bzero (glibc) is a memset the compiler may not drop:
// the same guarantee as OPENSSL_cleanse, without its byte-at-a-time loop,
// which cost more than a third of a short digest's own overhead.
static inline void intact_wipe(void *bytes, size_t count) {
    explicit_bzero(bytes, count);
}

static inline void intact_sha256_oneshot(const void *bytes, size_t count, unsigned char *digest) {
    SHA256_CTX context;
    SHA256_Init(&context);
    SHA256_Update(&context, bytes, count);
    SHA256_Final(digest, &context);
    intact_wipe(&context, sizeof context);
}

// ---- Hashing module (Sources/Hashing): SHA-256 and HMAC-SHA-256 of message content ----
// Every digest a recording takes of message content goes through one
// `intact_digest_key`: for plain SHA-256 `inner` is a fresh context; for
// HMAC-SHA-256 (RFC 2104) `inner` and `outer` have absorbed K' xor ipad and
// K' xor opad once, when the key was loaded. A digest copies `inner` (a
// struct copy on the stack or into the running state), so no OpenSSL object
// is allocated per digest and one key serves any number of threads; the
// outer pass of HMAC is one more copy and one block. Same deprecated
// low-level functions as above, for the same reason.
typedef struct intact_digest_key {
    SHA256_CTX inner;
    SHA256_CTX outer;
    int keyed;
} intact_digest_key;

// Plain SHA-256.
static inline void intact_digest_key_init_plain(intact_digest_key *key) {
    SHA256_Init(&key->inner);
    SHA256_Init(&key->outer);
    key->keyed = 0;
}

// HMAC-SHA-256 under `bytes` (any length: a key longer than the 64-byte
// block is hashed first, as RFC 2104 says).
static inline void intact_digest_key_init_hmac(intact_digest_key *key, const unsigned char *bytes, size_t count) {
    unsigned char block[SHA256_CBLOCK];
    unsigned char pad[SHA256_CBLOCK];
    memset(block, 0, sizeof block);
    if (count > sizeof block) {
        SHA256(bytes, count, block);
    } else if (count > 0) {
        memcpy(block, bytes, count);
    }
    for (size_t i = 0; i < sizeof block; i++) pad[i] = block[i] ^ 0x36;
    SHA256_Init(&key->inner);
    SHA256_Update(&key->inner, pad, sizeof pad);
    for (size_t i = 0; i < sizeof block; i++) pad[i] = block[i] ^ 0x5c;
    SHA256_Init(&key->outer);
    SHA256_Update(&key->outer, pad, sizeof pad);
    key->keyed = 1;
    OPENSSL_cleanse(block, sizeof block);
    OPENSSL_cleanse(pad, sizeof pad);
}

// Starts a running digest: `running` takes the key's inner state.
static inline void intact_digest_begin(const intact_digest_key *key, SHA256_CTX *running) {
    *running = key->inner;
}

static inline void intact_digest_update(SHA256_CTX *running, const void *bytes, size_t count) {
    SHA256_Update(running, bytes, count);
}

// Ends a running digest into `digest` (32 bytes); `running` is spent.
static inline void intact_digest_finish(const intact_digest_key *key, SHA256_CTX *running, unsigned char *digest) {
    SHA256_Final(digest, running);
    if (key->keyed) {
        // The outer pass is one block after the key's: the inner digest, the
        // 0x80 byte, zeros, and the length of the 96 bytes hashed (768 bits),
        // compressed straight into a copy of the key's outer state.
        SHA256_CTX outer = key->outer;
        unsigned char block[SHA256_CBLOCK] = {0};
        memcpy(block, digest, SHA256_DIGEST_LENGTH);
        block[SHA256_DIGEST_LENGTH] = 0x80;
        block[SHA256_CBLOCK - 2] = 0x03;
        SHA256_Transform(&outer, block);
        for (int i = 0; i < 8; i++) {
            digest[4 * i] = (unsigned char)(outer.h[i] >> 24);
            digest[4 * i + 1] = (unsigned char)(outer.h[i] >> 16);
            digest[4 * i + 2] = (unsigned char)(outer.h[i] >> 8);
            digest[4 * i + 3] = (unsigned char)outer.h[i];
        }
        intact_wipe(&outer, sizeof outer);
    }
    intact_wipe(running, sizeof *running);
}

// The digest of one contiguous range, on a context on the stack.
static inline void intact_digest_oneshot(const intact_digest_key *key, const void *bytes, size_t count,
                                         unsigned char *digest) {
    SHA256_CTX running = key->inner;
    SHA256_Update(&running, bytes, count);
    intact_digest_finish(key, &running, digest);
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

static inline long intact_SSL_set_mode(SSL *ssl, long mode) {
    return SSL_set_mode(ssl, mode);
}

static inline long intact_SSL_clear_mode(SSL *ssl, long mode) {
    return SSL_clear_mode(ssl, mode);
}

static inline long intact_SSL_get_mode(SSL *ssl) {
    return SSL_get_mode(ssl);
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
// The retry flags of a BIO (macros Swift does not import): a custom BIO's
// read with nothing to give says "try again once more bytes arrived".
static inline void intact_BIO_set_retry_read(BIO *bio) {
    BIO_set_retry_read(bio);
}
static inline void intact_BIO_clear_retry_flags(BIO *bio) {
    BIO_clear_retry_flags(bio);
}
// ---- end TLS module ----

#endif
