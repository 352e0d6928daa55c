// Pixel kernels in C, for two things Swift cannot do: pick an instruction set per function at run time (AVX2
// where the CPU has it, SSE2 otherwise), and stay optimized in a debug build (Swift's SIMD types at -Onone cost
// 358 ns a pixel, 57 ms for the changed part of a 720p frame; this target is always built with -O2). And the memory
// their planes live in. Nothing else: process and thread calls are CProcess's, WebKit's view is CWpeView's.
#pragma once
#include <stddef.h>
#include <stdint.h>

/// BGRx -> I420 (BT.709, limited range) for the rectangle x0..x1, y0..y1 (even edges, inside the picture), byte
/// for byte what I420Converter.convertScalar gives: Y = 16 + (47 R + 157 G + 16 B + 128) >> 8, and chroma from
/// the sums of each 2x2 block.
void ck_bgrx_to_i420(const uint8_t *bgrx, int stride, uint8_t *y, int y_stride, uint8_t *u, int u_stride,
                     uint8_t *v, int v_stride, int x0, int y0, int x1, int y1);

/// The chroma of one 2x2 block whose four pixels lie in different places (a block across the edge of a region
/// written from elsewhere): the same bytes ck_bgrx_to_i420 gives for those four pixels side by side.
void ck_bgrx_block_chroma(const uint8_t *a, const uint8_t *b, const uint8_t *c, const uint8_t *d, uint8_t *u,
                          uint8_t *v);

/// The SSE2 path alone (what runs on a CPU without AVX2), so tests can check it on any machine.
void ck_bgrx_to_i420_sse2(const uint8_t *bgrx, int stride, uint8_t *y, int y_stride, uint8_t *u, int u_stride,
                          uint8_t *v, int v_stride, int x0, int y0, int x1, int y1);

/// I420 (BT.709, limited range) -> BGRx for the rectangle x0..x1, y0..y1 of the picture (any edges inside it): how a
/// video layer that arrives as I420 is drawn where widgets lie over it.
void ck_i420_to_bgrx(const uint8_t *y, int y_stride, const uint8_t *u, int u_stride, const uint8_t *v, int v_stride,
                     uint8_t *bgrx, int stride, int x0, int y0, int x1, int y1);

/// 1 when the AVX2 path runs on this CPU.
int ck_uses_avx2(void);

/// Memory for planes that a frame reads row by row (release it with free(); NULL when out of memory). From 256 KB
/// on it is aligned to 2 MB, rounded up to it, and advised into 2 MB pages (MADV_HUGEPAGE; where the kernel has none
/// to give, ordinary pages). The rows of a strip wider than the picture lie that far apart, up to a 4 KB page each,
/// and a frame that starts cold (x264 ran in between) missed the TLB on every row. Measured: 41 -> 34 us a frame
/// for the demo ticker's band (docs/BENCHMARKS.md).
void *ck_alloc_planes(size_t bytes);

/// 1 when every pixel of premultiplied BGRA (little-endian: alpha in each word's top byte) is opaque: a web page's
/// picture that covers its box is then copied into the frame instead of blended over it.
int ck_bgra_opaque(const uint8_t *bgra, size_t pixels);
