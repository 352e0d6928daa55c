#include "ckernels.h"
#include <string.h>

typedef uint32_t u32x8 __attribute__((vector_size(32)));
typedef int32_t i32x8 __attribute__((vector_size(32)));
typedef uint8_t u8x8 __attribute__((vector_size(8)));

// One 2x2 block at a time: the edges of rows whose width is not a multiple of 16.
static inline uint8_t luma(const uint8_t *p) {
    return (uint8_t)(((47 * p[2] + 157 * p[1] + 16 * p[0] + 128) >> 8) + 16);
}

static inline void chroma(const uint8_t *a, const uint8_t *b, const uint8_t *c, const uint8_t *d, uint8_t *u,
                          uint8_t *v) {
    int32_t r = a[2] + b[2] + c[2] + d[2], g = a[1] + b[1] + c[1] + d[1], bl = a[0] + b[0] + c[0] + d[0];
    *u = (uint8_t)(((-26 * r - 86 * g + 112 * bl + 512) >> 10) + 128);
    *v = (uint8_t)(((112 * r - 102 * g - 10 * bl + 512) >> 10) + 128);
}

void ck_bgrx_block_chroma(const uint8_t *a, const uint8_t *b, const uint8_t *c, const uint8_t *d, uint8_t *u,
                          uint8_t *v) {
    chroma(a, b, c, d, u, v);
}

static void blocks(const uint8_t *r0, const uint8_t *r1, uint8_t *y0, uint8_t *y1, uint8_t *u, uint8_t *v,
                   int from, int to) {
    for (int x = from; x < to; x += 2) {
        const uint8_t *a = r0 + x * 4, *b = a + 4, *c = r1 + x * 4, *d = c + 4;
        y0[x] = luma(a);
        y0[x + 1] = luma(b);
        y1[x] = luma(c);
        y1[x + 1] = luma(d);
        chroma(a, b, c, d, u + (x >> 1), v + (x >> 1));
    }
}

// Eight pixels of two rows: their luma stored, and the channel sums of their four 2x2 blocks returned in
// lanes 0..3 (the other lanes are don't-care).
#define EIGHT(NAME, ATTR)                                                                                          \
    ATTR static inline void NAME(const uint8_t *r0, const uint8_t *r1, uint8_t *y0, uint8_t *y1, i32x8 *rs,      \
                                 i32x8 *gs, i32x8 *bs) {                                                           \
        u32x8 a, c;                                                                                                \
        memcpy(&a, r0, 32);                                                                                        \
        memcpy(&c, r1, 32);                                                                                        \
        u32x8 b0 = a & 0xFF, g0 = (a >> 8) & 0xFF, q0 = (a >> 16) & 0xFF;                                          \
        u32x8 b1 = c & 0xFF, g1 = (c >> 8) & 0xFF, q1 = (c >> 16) & 0xFF;                                          \
        u8x8 l0 = __builtin_convertvector(((47 * q0 + 157 * g0 + 16 * b0 + 128) >> 8) + 16, u8x8);                 \
        u8x8 l1 = __builtin_convertvector(((47 * q1 + 157 * g1 + 16 * b1 + 128) >> 8) + 16, u8x8);                 \
        memcpy(y0, &l0, 8);                                                                                        \
        memcpy(y1, &l1, 8);                                                                                        \
        i32x8 r = (i32x8)(q0 + q1), g = (i32x8)(g0 + g1), bl = (i32x8)(b0 + b1);                                   \
        *rs = __builtin_shufflevector(r, r, 0, 2, 4, 6, 0, 0, 0, 0) + __builtin_shufflevector(r, r, 1, 3, 5, 7, 1, 1, 1, 1); \
        *gs = __builtin_shufflevector(g, g, 0, 2, 4, 6, 0, 0, 0, 0) + __builtin_shufflevector(g, g, 1, 3, 5, 7, 1, 1, 1, 1); \
        *bs = __builtin_shufflevector(bl, bl, 0, 2, 4, 6, 0, 0, 0, 0) + __builtin_shufflevector(bl, bl, 1, 3, 5, 7, 1, 1, 1, 1); \
    }

// Rows two at a time, sixteen pixels a step, then the edge one block at a time.
#define ROWS(NAME, EIGHTFN, ATTR)                                                                                  \
    ATTR static void NAME(const uint8_t *bgrx, int stride, uint8_t *yp, int ys, uint8_t *up, int us, uint8_t *vp, \
                          int vs, int x0, int y0, int x1, int y1) {                                                \
        int wide = x0 + (x1 - x0) / 16 * 16;                                                                       \
        for (int y = y0; y < y1; y += 2) {                                                                         \
            const uint8_t *r0 = bgrx + (long)y * stride, *r1 = r0 + stride;                                        \
            uint8_t *l0 = yp + (long)y * ys, *l1 = l0 + ys;                                                        \
            uint8_t *u = up + (long)(y >> 1) * us, *v = vp + (long)(y >> 1) * vs;                                  \
            for (int x = x0; x < wide; x += 16) {                                                                  \
                i32x8 ra, ga, ba, rb, gb, bb;                                                                      \
                EIGHTFN(r0 + x * 4, r1 + x * 4, l0 + x, l1 + x, &ra, &ga, &ba);                                    \
                EIGHTFN(r0 + x * 4 + 32, r1 + x * 4 + 32, l0 + x + 8, l1 + x + 8, &rb, &gb, &bb);                  \
                i32x8 r = __builtin_shufflevector(ra, rb, 0, 1, 2, 3, 8, 9, 10, 11);                               \
                i32x8 g = __builtin_shufflevector(ga, gb, 0, 1, 2, 3, 8, 9, 10, 11);                               \
                i32x8 bl = __builtin_shufflevector(ba, bb, 0, 1, 2, 3, 8, 9, 10, 11);                              \
                u8x8 cu = __builtin_convertvector(((-26 * r - 86 * g + 112 * bl + 512) >> 10) + 128, u8x8);        \
                u8x8 cv = __builtin_convertvector(((112 * r - 102 * g - 10 * bl + 512) >> 10) + 128, u8x8);        \
                memcpy(u + (x >> 1), &cu, 8);                                                                      \
                memcpy(v + (x >> 1), &cv, 8);                                                                      \
            }                                                                                                      \
            blocks(r0, r1, l0, l1, u, v, wide, x1);                                                                \
        }                                                                                                          \
    }

EIGHT(eight_sse2, )
ROWS(rows_sse2, eight_sse2, )
EIGHT(eight_avx2, __attribute__((target("avx2"))))
ROWS(rows_avx2, eight_avx2, __attribute__((target("avx2"))))

int ck_uses_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
}

void ck_bgrx_to_i420(const uint8_t *bgrx, int stride, uint8_t *y, int y_stride, uint8_t *u, int u_stride,
                     uint8_t *v, int v_stride, int x0, int y0, int x1, int y1) {
    if (ck_uses_avx2()) {
        rows_avx2(bgrx, stride, y, y_stride, u, u_stride, v, v_stride, x0, y0, x1, y1);
    } else {
        rows_sse2(bgrx, stride, y, y_stride, u, u_stride, v, v_stride, x0, y0, x1, y1);
    }
}

void ck_bgrx_to_i420_sse2(const uint8_t *bgrx, int stride, uint8_t *y, int y_stride, uint8_t *u, int u_stride,
                          uint8_t *v, int v_stride, int x0, int y0, int x1, int y1) {
    rows_sse2(bgrx, stride, y, y_stride, u, u_stride, v, v_stride, x0, y0, x1, y1);
}

int ck_bgra_opaque(const uint8_t *bgra, size_t pixels) {
    uint32_t all = 0xffffffffu;
    const uint32_t *p = (const uint32_t *)bgra;
    for (size_t i = 0; i < pixels; i++) all &= p[i];
    return (all >> 24) == 0xff;
}
