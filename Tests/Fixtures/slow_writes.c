// A slow disk for one folder: preloaded into a process (LD_PRELOAD), it makes every write() and writev() to a file
// whose path contains SLOW_WRITES_MATCH take SLOW_WRITES_MS milliseconds longer, for as long as the file
// SLOW_WRITES_WHILE exists (the test removes it to make the disk fast again). Everything else is untouched.
// Built by the test that uses it: clang -shared -fPIC -o slow_writes.so slow_writes.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static void stall(int fd) {
    const char *match = getenv("SLOW_WRITES_MATCH"), *flag = getenv("SLOW_WRITES_WHILE"), *ms = getenv("SLOW_WRITES_MS");
    if (!match || !flag || !ms) return;
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0) return;
    path[n] = 0;
    struct stat st;
    if (!strstr(path, match) || stat(flag, &st) != 0) return;
    long delay = atol(ms);
    struct timespec t = { delay / 1000, (delay % 1000) * 1000000L };
    nanosleep(&t, NULL);
}

ssize_t write(int fd, const void *buf, size_t count) {
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    stall(fd);
    return real(fd, buf, count);
}

ssize_t writev(int fd, const struct iovec *iov, int count) {
    static ssize_t (*real)(int, const struct iovec *, int);
    if (!real) real = (ssize_t (*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
    stall(fd);
    return real(fd, iov, count);
}
