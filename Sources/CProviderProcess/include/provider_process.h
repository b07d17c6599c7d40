/*
 * provider_process.h — the few process calls Swift cannot make directly: the wait-status macros
 * (function-like macros do not import), prctl (variadic), posix_spawn's closefrom and chdir actions,
 * pipe2 (declared only for _GNU_SOURCE) and pidfd_open (a bare system call in older C libraries).
 * Everything else ProviderIsolation and ChildProcesses need is called from Swift.
 */
#ifndef SPEAKERSYNC_PROVIDER_PROCESS_H
#define SPEAKERSYNC_PROVIDER_PROCESS_H

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

static inline int speakersync_wait_exited(int status) { return WIFEXITED(status); }
static inline int speakersync_wait_exit_status(int status) { return WEXITSTATUS(status); }
static inline int speakersync_wait_signaled(int status) { return WIFSIGNALED(status); }
static inline int speakersync_wait_term_signal(int status) { return WTERMSIG(status); }
static inline int speakersync_wait_core_dumped(int status) {
#ifdef WCOREDUMP
    return WCOREDUMP(status);
#else
    (void)status;
    return 0;
#endif
}

/* Ask the kernel to send `signal` to this process when its parent thread exits (Linux); 0 elsewhere. */
static inline int speakersync_set_parent_death_signal(int signal) {
#if defined(__linux__)
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
#else
    (void)signal;
    return 0;
#endif
}

/* Have posix_spawn close every descriptor from `first` up in the child, so a worker never holds the
 * server's sockets or files whatever their close-on-exec flag (glibc 2.34+). Returns 0, or an error
 * number where the C library lacks it (the caller then relies on close-on-exec alone). */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
static inline int speakersync_spawn_close_from(posix_spawn_file_actions_t *actions, int first) {
    return posix_spawn_file_actions_addclosefrom_np(actions, first);
}
#else
static inline int speakersync_spawn_close_from(posix_spawn_file_actions_t *actions, int first) {
    (void)actions; (void)first;
    return 38; /* ENOSYS */
}
#endif

/* Have posix_spawn change the child's working directory before it runs (glibc 2.29+). Returns 0, or
 * an error number where the C library lacks it. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);
static inline int speakersync_spawn_chdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}
#else
static inline int speakersync_spawn_chdir(posix_spawn_file_actions_t *actions, const char *path) {
    (void)actions; (void)path;
    return 38; /* ENOSYS */
}
#endif

/* A pipe whose two ends are close-on-exec from the start: no child that another thread spawns at the
 * same moment can inherit an end (and hold a reader's end-of-file back for as long as it lives).
 * 0, or -1 with errno set. */
#if defined(__linux__)
extern int pipe2(int fds[2], int flags);
static inline int speakersync_pipe_cloexec(int fds[2]) { return pipe2(fds, 02000000 /* O_CLOEXEC */); }
#else
static inline int speakersync_pipe_cloexec(int fds[2]) { return pipe(fds); }
#endif

/* A descriptor that becomes readable when the child `pid` exits (Linux 5.3+): waiting on it cannot
 * confuse the child with a later process given the same number. -1 with errno set (ENOSYS elsewhere). */
static inline int speakersync_pidfd_open(pid_t pid) {
#if defined(__linux__) && defined(SYS_pidfd_open)
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = 38;
    return -1;
#endif
}

/* Start the child in a session of its own (POSIX_SPAWN_SETSID, glibc 2.26+): its own process group
 * (a terminal's Ctrl-C does not reach it) and, where the kernel groups scheduling by session
 * (autogroup), its own scheduling group, whose weight `nice` then sets for all its threads together.
 * Returns 0, or an error number where the C library lacks it. */
static inline int speakersync_spawn_new_session(posix_spawnattr_t *attributes) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 26))
    short flags = 0;
    if (posix_spawnattr_getflags(attributes, &flags) != 0) return 22; /* EINVAL */
    return posix_spawnattr_setflags(attributes, (short)(flags | 0x80 /* POSIX_SPAWN_SETSID */));
#else
    (void)attributes;
    return 38; /* ENOSYS */
#endif
}

#endif
