#ifndef INTACT_CNGHTTP2_SHIM_H
#define INTACT_CNGHTTP2_SHIM_H
// nghttp2 1.52, v1 API only (nghttp2_session_mem_recv, nghttp2_data_provider;
// no *2 calls). Shims for what Swift cannot import are `static inline`,
// prefixed `intact_`, and grouped under a comment that says why.
#include <nghttp2/nghttp2.h>

#endif
