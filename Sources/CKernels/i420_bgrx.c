#include "ckernels.h"

// I420 (BT.709, limited range) -> BGRx, the inverse of bgrx_i420.c's matrix in 8-bit fixed point:
// R = 1.164 (Y-16) + 1.793 (V-128), G = 1.164 (Y-16) - 0.213 (U-128) - 0.533 (V-128), B = 1.164 (Y-16) + 2.112 (U-128).
// Written as plain loops over one row: clang vectorizes them (with AVX2 in the copy built for it).
static inline uint8_t clamp8(int v) { return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v); }

#define ROW(NAME, ATTR)                                                                                            \
    ATTR static void NAME(const uint8_t *yr, const uint8_t *ur, const uint8_t *vr, uint8_t *out, int x0, int x1) { \
        for (int x = x0; x < x1; x++) {                                                                            \
            int c = 298 * (yr[x] - 16), d = ur[x >> 1] - 128, e = vr[x >> 1] - 128;                               \
            uint8_t *p = out + x * 4;                                                                              \
            p[0] = clamp8((c + 541 * d + 128) >> 8);                                                               \
            p[1] = clamp8((c - 55 * d - 136 * e + 128) >> 8);                                                      \
            p[2] = clamp8((c + 459 * e + 128) >> 8);                                                               \
            p[3] = 255;                                                                                            \
        }                                                                                                          \
    }

ROW(row_sse2, )
ROW(row_avx2, __attribute__((target("avx2"))))

void ck_i420_to_bgrx(const uint8_t *y, int y_stride, const uint8_t *u, int u_stride, const uint8_t *v, int v_stride,
                     uint8_t *bgrx, int stride, int x0, int y0, int x1, int y1) {
    int avx2 = ck_uses_avx2();
    for (int r = y0; r < y1; r++) {
        const uint8_t *yr = y + (long)r * y_stride, *ur = u + (long)(r >> 1) * u_stride, *vr = v + (long)(r >> 1) * v_stride;
        uint8_t *out = bgrx + (long)r * stride;
        if (avx2) row_avx2(yr, ur, vr, out, x0, x1); else row_sse2(yr, ur, vr, out, x0, x1);
    }
}
