#!/usr/bin/env bash
# What one sleep and wake-up costs a thread on this machine, apart from any work: a tiny C program sleeps to absolute
# deadlines PERIOD apart (as the frame loop does) and reports the CPU time its thread is charged per sleep, at several
# periods; then the same loop waking a second thread each period (as a frame handed to an encoder's thread does).
# On a virtual machine the cost of a wake-up grows with the time slept (caches, TLB and the host's own switches).
# Usage: bash bench/wake_cost.sh [ITERATIONS]   (needs a C compiler: cc, or CC=...)
set -euo pipefail
N="${1:-300}"
DIR="$(mktemp -d)"
trap 'rm -rf "$DIR"' EXIT
cat >"$DIR/wake.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int pending, done;
static uint64_t now(clockid_t k) { struct timespec t; clock_gettime(k, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
static void *second(void *unused) {
    (void)unused;
    pthread_mutex_lock(&m);
    while (!done) { while (!pending && !done) pthread_cond_wait(&c, &m); pending = 0; }
    pthread_mutex_unlock(&m);
    return NULL;
}
int main(int argc, char **argv) {
    long period = atol(argv[1]); int n = atoi(argv[2]), hop = atoi(argv[3]);
    pthread_t t;
    if (hop) pthread_create(&t, NULL, second, NULL);
    struct timespec due; clock_gettime(CLOCK_MONOTONIC, &due);
    uint64_t slept = 0, p0 = now(CLOCK_PROCESS_CPUTIME_ID);
    for (int i = 0; i < n; i++) {
        due.tv_nsec += period;
        while (due.tv_nsec >= 1000000000) { due.tv_nsec -= 1000000000; due.tv_sec++; }
        uint64_t c0 = now(CLOCK_THREAD_CPUTIME_ID);
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
        slept += now(CLOCK_THREAD_CPUTIME_ID) - c0;
        if (hop) { pthread_mutex_lock(&m); pending = 1; pthread_cond_signal(&c); pthread_mutex_unlock(&m); }
    }
    uint64_t p1 = now(CLOCK_PROCESS_CPUTIME_ID);
    if (hop) { pthread_mutex_lock(&m); done = 1; pthread_cond_signal(&c); pthread_mutex_unlock(&m); pthread_join(t, NULL); }
    printf("%-9.3f %-6s %10.1f %12.1f\n", period / 1e6, hop ? "yes" : "no", slept / 1e3 / n, (p1 - p0) / 1e3 / n);
    return 0;
}
C
"${CC:-cc}" -O2 -pthread "$DIR/wake.c" -o "$DIR/wake"
printf "%-9s %-6s %10s %12s\n" "period ms" "second" "sleep us" "process us"
for p in 100000 1000000 10000000 16666667 33333333; do "$DIR/wake" "$p" "$N" 0; done
for p in 16666667 33333333; do "$DIR/wake" "$p" "$N" 1; done
