// A child in a session of its own, and the pipes it is given (see cprocess.h).
#define _GNU_SOURCE
#include <signal.h>
#include <spawn.h>
#include <fcntl.h>
#include <unistd.h>
#include "cprocess.h"

extern char **environ;

pid_t cproc_spawn_session(const char *path, char *const argv[], char *const envp[], int in_fd, int out_fd,
                          int err_fd) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    pid_t pid = -1;
    if (posix_spawn_file_actions_init(&actions) != 0) return -1;
    if (posix_spawnattr_init(&attr) != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return -1;
    }
    posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    int rc = posix_spawn(&pid, path, &actions, &attr, argv, envp ? envp : environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc == 0 ? pid : -1;
}

int cproc_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
