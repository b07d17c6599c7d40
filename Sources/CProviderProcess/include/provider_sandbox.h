/*
 * provider_sandbox.h — the kernel calls that confine a provider worker (docs/security.md, "The provider
 * sandbox"): identity and capabilities, no_new_privs, the seccomp filters and Landlock. Written in C
 * because they are raw system calls on kernel structures (capset, seccomp, landlock_*), the BPF program
 * is built from macros, and prctl is variadic. Each call returns 0 (or a documented value) on success
 * and -1 with errno set on failure; Syscall.swift turns that into a thrown SystemCallError. On systems
 * other than Linux every call fails with ENOSYS.
 */
#ifndef SPEAKERSYNC_PROVIDER_SANDBOX_H
#define SPEAKERSYNC_PROVIDER_SANDBOX_H

#include <stdint.h>
#include <sys/types.h>

/* ---- identity and capabilities ---- */

/* Drops every capability from the bounding set (PR_CAPBSET_DROP), so nothing executed later can
 * regain one. Needs CAP_SETPCAP: -1/EPERM without it. */
int speakersync_sandbox_drop_bounding_set(void);

/* Clears the ambient set and the effective, permitted and inheritable sets (capset). Never needs a
 * privilege: a process may always give capabilities up. */
int speakersync_sandbox_clear_capabilities(void);

/* 1 when any capability is left in the effective, permitted, inheritable or ambient set, 0 when none,
 * -1 on error. */
int speakersync_sandbox_has_capabilities(void);

/* 1 when `capability` is in the bounding set, 0 when not, -1 on error. */
int speakersync_sandbox_bounding_has(int capability);

/* No supplementary groups, then real/effective/saved gid and uid. Then checks that the old identity
 * cannot be taken back (setresuid(0) must fail): -1/EPERM with errno EPERM if it could. */
int speakersync_sandbox_switch_user(uid_t uid, gid_t gid);

/* Switches one thread of this process (`tid`) to `uid`/`gid` with no supplementary groups, by a signal
 * whose handler makes the raw calls on that thread. For the threads glibc's setresuid skips: the main
 * thread, once Dispatch's dispatch_main has called pthread_exit on it, stays alive in sigsuspend (its
 * handlers still run) but is "exiting" to glibc. Waits up to 5 s for the thread. */
int speakersync_sandbox_switch_thread(pid_t tid, uid_t uid, gid_t gid);

/* Empties the bounding set of thread `tid` the same way: for threads that shared libraries' constructors
 * started before the worker's own constructor ran. Needs CAP_SETPCAP (before the user switch). */
int speakersync_sandbox_drop_bounding_set_on_thread(pid_t tid);

int speakersync_sandbox_set_no_new_privs(void);

/* Whether the constructor that runs before main (in a `provider-worker … --sandbox on` process, while
 * it has one thread) emptied the bounding set (as root) and set no_new_privs: 0 done, 1 not run,
 * -1 failed (errno set). */
int speakersync_sandbox_early_status(void);

/* What the constructor did about Landlock (`--landlock-read`/`--landlock-write` arguments): 0 not
 * asked; > 0 the ABI enforced on every thread; -1 the kernel has no Landlock; -2 it failed, with
 * *error the errno and *path the rule's path ("" when not about one path; static storage). */
int speakersync_sandbox_early_landlock(int *error, const char **path);
int speakersync_sandbox_set_dumpable(int dumpable);

/* ---- seccomp ---- */

/* The worker's filter, installed once its plugin and models are loaded (every thread,
 * SECCOMP_FILTER_FLAG_TSYNC): a foreign architecture or the x32 ABI kills the process; the system
 * calls a diarizer never needs answer EPERM (the table in docs/security.md), execve and execveat
 * among them; socket() answers EPERM for every family but AF_INET/AF_INET6 stream or datagram, and
 * for those too unless `allow_inet` (a provider declared to need the network: Falcon's online
 * activation); socketpair only for AF_UNIX; process_vm_readv/writev only on `self`; clone with a
 * namespace flag answers EPERM and clone3 ENOSYS (its flags sit behind a pointer the filter cannot
 * read; the C library then uses clone). Requires no_new_privs or CAP_SYS_ADMIN. */
int speakersync_seccomp_install(pid_t self, int allow_inet);

/* Whether this build can filter this architecture (x86_64, aarch64). */
int speakersync_seccomp_supported(void);

/* ---- Landlock ---- */

/* The kernel's Landlock ABI version (>= 1), or 0 when Landlock is absent or disabled. */
int speakersync_landlock_abi(void);

/* A ruleset handling every filesystem right `abi` knows, TCP bind (abi >= 4) and, for abi >= 6, the
 * abstract-Unix-socket and signal scopes. Returns its descriptor. */
int speakersync_landlock_create_ruleset(int abi);

enum speakersync_landlock_access {
    SPEAKERSYNC_LANDLOCK_READ = 0,          /* read files, list folders */
    SPEAKERSYNC_LANDLOCK_READ_EXECUTE = 1,  /* the above, and execute */
    SPEAKERSYNC_LANDLOCK_READ_WRITE = 2,    /* read, write, create and remove regular files and folders */
};

/* Allows `access` beneath `path` (a folder) or on `path` (a file: only the file rights of `access`). */
int speakersync_landlock_allow(int ruleset, int abi, const char *path, int access);

/* Enforces the ruleset on the calling thread and the threads and processes it starts later, then
 * closes it. Requires no_new_privs or CAP_SYS_ADMIN. */
int speakersync_landlock_enforce(int ruleset);

/* Enforces the ruleset on thread `tid` of this process (a Landlock domain is per thread and only
 * inherited by threads started later), through the same signal as speakersync_sandbox_switch_thread.
 * The ruleset stays open. */
int speakersync_landlock_restrict_thread(pid_t tid, int ruleset);

/* The calling thread's id (gettid). */
pid_t speakersync_current_thread_id(void);

#endif
