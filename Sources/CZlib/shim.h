#ifndef AF_CZLIB_SHIM_H
#define AF_CZLIB_SHIM_H

#include <zlib.h>

/* deflateInit is a macro over deflateInit_; this wrapper lets Swift call it. */
static inline int afz_deflate_init(z_streamp s, int level) { return deflateInit(s, level); }
/* windowBits as deflateInit2 takes them: 15 zlib, 31 gzip, -15 raw deflate. */
static inline int afz_deflate_init2(z_streamp s, int level, int windowBits) {
    return deflateInit2(s, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
static inline int afz_inflate_init(z_streamp s) { return inflateInit(s); }
/* 15 + 16: a gzip stream (header and trailer checked). */
static inline int afz_inflate_init_gzip(z_streamp s) { return inflateInit2(s, 15 + 16); }
/* -15: raw deflate, without the zlib header and trailer. */
static inline int afz_inflate_init_raw(z_streamp s) { return inflateInit2(s, -15); }

#endif
