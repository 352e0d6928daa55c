// A thread's name as the system shows it (see cprocess.h).
#define _GNU_SOURCE
#include <pthread.h>
#include "cprocess.h"

void cproc_name_this_thread(const char *name) { pthread_setname_np(pthread_self(), name); }
