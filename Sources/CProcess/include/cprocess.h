// Process and thread calls Swift's Glibc module does not offer (GNU extensions, or variadic): starting a child in a
// session of its own, a pipe no other child inherits, and naming a thread. Apart from the pixel kernels (CKernels):
// nothing here is about pictures, and none of it needs their -O2.
#pragma once
#include <sys/types.h>

/// Starts `path` with `argv` (and `envp`, or this process's environment) in a session of its own (setsid: its
/// process group is its own, so the web process it starts ends with it when the group is killed), standard input,
/// output and error on the three descriptors, every other descriptor closed, signals at their defaults and none
/// blocked. Returns the pid, or -1. Here because Swift's Glibc module does not offer posix_spawn's setsid flag or
/// posix_spawn_file_actions_addclosefrom_np (GNU extensions).
pid_t cproc_spawn_session(const char *path, char *const argv[], char *const envp[], int in_fd, int out_fd,
                          int err_fd);

/// pipe2(fds, O_CLOEXEC): a pipe no other child inherits (pipe2 is a GNU extension Swift's Glibc does not offer).
int cproc_pipe_cloexec(int fds[2]);

/// Names the calling thread as `top -H`, perf and /proc show it (15 bytes at most). Here because Swift's Glibc
/// module hides pthread_setname_np (a _GNU_SOURCE function) and prctl is variadic.
void cproc_name_this_thread(const char *name);

/// Blocks of `threshold` bytes and more are mapped apart and given back to the system when freed (mallopt
/// M_MMAP_THRESHOLD, which also stops glibc raising the threshold as large blocks are freed: by default the first
/// freed block of a few hundred KiB moves the threshold above it, and every later one of that size stays in the
/// heap of the arena of the thread that made it). Returns 1 when set, 0 when the user set it (its environment
/// variable) or glibc refused. Here because Swift's Glibc module does not offer mallopt.
int cproc_map_large_blocks_apart(size_t threshold);

/// At most `arenas` malloc arenas (mallopt M_ARENA_MAX; glibc's default is 8 per core): each thread's blocks go to
/// one of few heaps, so what the threads of a rendition, a WebRTC session or a renewed page leave scattered over their
/// arenas' pages stays in fewer of them. Returns 1 when set, 0 when the user set it (MALLOC_ARENA_MAX) or glibc refused.
int cproc_limit_arenas(int arenas);

/// Gives the free pages inside every arena's heaps back to the system (malloc_trim(0): glibc returns only a heap's
/// free top by itself; what freed blocks leave between live ones stays resident). Returns 1 when some were given
/// back. The memory stays the process's address space; touching it again costs a page fault.
int cproc_give_back_free_memory(void);

/// What glibc's allocator holds now, over every arena (mallinfo2): the bytes of the blocks it has given out (in its
/// heaps and mapped apart), the part of those mapped apart (blocks of the threshold's size and more: pictures,
/// encoders' planes) and the bytes of the free blocks inside its heaps (resident, or given back already). A
/// resident memory that rises while the blocks given out do not is pages kept for the live blocks among free ones.
/// Walks every arena's free lists under its lock: for a scrape, not a frame.
void cproc_heap_figures(size_t *given_out, size_t *mapped_apart, size_t *free_in_heaps);
