// Memory for planes read row by row every frame (see ckernels.h).
#include "ckernels.h"
#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)
#define HUGE_FROM ((size_t)256 << 10)

void *ck_alloc_planes(size_t bytes) {
    void *p = NULL;
    if (bytes < HUGE_FROM) return posix_memalign(&p, 64, bytes ? bytes : 1) == 0 ? p : NULL;
    size_t rounded = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    if (posix_memalign(&p, HUGE_PAGE, rounded) != 0) return NULL;
    // Advice only: where the kernel has no huge page to give, the memory is ordinary pages.
    madvise(p, rounded, MADV_HUGEPAGE);
    return p;
}
