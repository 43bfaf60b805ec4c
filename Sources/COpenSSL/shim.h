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

/* ---- Certificate authority and certificate inspection (Sources/TLS/X509*.swift) ----
 * XN_FLAG_RFC2253 is an OR of macros that are themselves ORs and casts
 * (`(unsigned long)` in XN_FLAG_SEP_COMMA_PLUS and friends); Swift imports
 * none of it. RFC 2253 line form, with UTF-8 kept instead of escaped. */
static inline unsigned long intact_XN_FLAG_RFC2253_UTF8(void) {
    return XN_FLAG_RFC2253 & ~(unsigned long)ASN1_STRFLGS_ESC_MSB;
}

#endif
