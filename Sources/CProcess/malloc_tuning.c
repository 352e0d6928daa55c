// glibc's allocator, tuned for a process that makes and drops large buffers while it runs.
#include <malloc.h>
#include <stdlib.h>
#include "cprocess.h"

int cproc_map_large_blocks_apart(size_t threshold) {
    // A threshold the user set (MALLOC_MMAP_THRESHOLD_) is theirs.
    if (getenv("MALLOC_MMAP_THRESHOLD_") != NULL) return 0;
    return mallopt(M_MMAP_THRESHOLD, (int)threshold);
}

int cproc_limit_arenas(int arenas) {
    // A limit the user set (MALLOC_ARENA_MAX) is theirs.
    if (getenv("MALLOC_ARENA_MAX") != NULL) return 0;
    return mallopt(M_ARENA_MAX, arenas);
}

int cproc_give_back_free_memory(void) {
    return malloc_trim(0);
}

void cproc_heap_figures(size_t *given_out, size_t *mapped_apart, size_t *free_in_heaps) {
    struct mallinfo2 m = mallinfo2();
    *given_out = m.uordblks + m.hblkhd;
    *mapped_apart = m.hblkhd;
    *free_in_heaps = m.fordblks;
}
