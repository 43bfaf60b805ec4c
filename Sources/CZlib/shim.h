#ifndef INTACT_CZLIB_SHIM_H
#define INTACT_CZLIB_SHIM_H
// zlib (Debian's zlib1g-dev). Shims for what Swift cannot import are
// `static inline`, prefixed `intact_`, and grouped under a comment that says why.
#include <zlib.h>

// deflateInit2 and inflateInit2 are macros (they pass ZLIB_VERSION and
// sizeof(z_stream) to the *_ functions); Swift imports no function-like macro.
static inline int intact_deflateInit2(z_streamp stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}

static inline int intact_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

#endif
