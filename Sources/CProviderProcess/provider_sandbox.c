/*
 * provider_sandbox.c — see include/provider_sandbox.h and docs/security.md ("The provider sandbox").
 *
 * Nothing here decides policy: which user, which paths and whether the network is allowed come from
 * the caller (ProviderSandbox in Swift). The seccomp filter, the one table of policy, is in
 * provider_seccomp.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "provider_sandbox.h"

#include <dirent.h>
#include <errno.h>

#if defined(__linux__)
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- identity and capabilities ---------------------------------------------------------------- */

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

static int last_capability(void) {
    /* The running kernel may know more capabilities than these headers: ask it. */
    int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char text[16] = {0};
        ssize_t count = read(fd, text, sizeof text - 1);
        close(fd);
        if (count > 0) {
            int value = 0;
            for (ssize_t i = 0; i < count && text[i] >= '0' && text[i] <= '9'; i++) value = value * 10 + (text[i] - '0');
            if (value > 0) return value;
        }
    }
    return CAP_LAST_CAP;
}

int speakersync_sandbox_drop_bounding_set(void) {
    int last = last_capability();
    for (int capability = 0; capability <= last; capability++) {
        if (prctl(PR_CAPBSET_DROP, (unsigned long)capability, 0UL, 0UL, 0UL) != 0) {
            if (errno == EINVAL) continue; /* not known to this kernel */
            return -1;
        }
    }
    return 0;
}

int speakersync_sandbox_clear_capabilities(void) {
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0UL, 0UL, 0UL) != 0 && errno != EINVAL) return -1;
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    memset(data, 0, sizeof data);
    return (int)syscall(SYS_capset, &header, data);
}

int speakersync_sandbox_has_capabilities(void) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capget, &header, data) != 0) return -1;
    for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
        if (data[i].effective || data[i].permitted || data[i].inheritable) return 1;
    }
    int last = last_capability();
    for (int capability = 0; capability <= last; capability++) {
        int raised = prctl(PR_CAP_AMBIENT, 1 /* PR_CAP_AMBIENT_IS_SET */, (unsigned long)capability, 0UL, 0UL);
        if (raised > 0) return 1;
    }
    return 0;
}

int speakersync_sandbox_bounding_has(int capability) {
    return prctl(PR_CAPBSET_READ, (unsigned long)capability, 0UL, 0UL, 0UL);
}

int speakersync_sandbox_switch_user(uid_t uid, gid_t gid) {
    if (setgroups(0, NULL) != 0) return -1;
    if (setresgid(gid, gid, gid) != 0) return -1;
    if (setresuid(uid, uid, uid) != 0) return -1;
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    if (getresuid(&ruid, &euid, &suid) != 0 || getresgid(&rgid, &egid, &sgid) != 0) return -1;
    if (ruid != uid || euid != uid || suid != uid || rgid != gid || egid != gid || sgid != gid) {
        errno = EPERM;
        return -1;
    }
    /* The classic check that a drop is for good: going back must fail. */
    if (uid != 0 && setresuid(0, 0, 0) == 0) {
        errno = EPERM;
        return -1;
    }
    if (getgroups(0, NULL) != 0) {
        errno = EPERM;
        return -1;
    }
    return 0;
}

int speakersync_sandbox_set_no_new_privs(void) {
    return prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL);
}

/* The Landlock system calls, the same number on every architecture (bookworm's headers may lack them). */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

/* ---- one thread glibc's setresuid leaves out ---- */

static int thread_switch_operation; /* 0: switch the user, 1: empty the bounding set, 2: Landlock */
static int thread_switch_ruleset;
static uid_t thread_switch_uid;
static gid_t thread_switch_gid;
static volatile int thread_switch_done;
static volatile int thread_switch_error;

/* Runs on the target thread: the raw system calls change that thread's credentials only. */
static void thread_switch_handler(int signal) {
    (void)signal;
    int saved = errno;
    long result;
    if (thread_switch_operation == 1) {
        result = speakersync_sandbox_drop_bounding_set();
    } else if (thread_switch_operation == 2) {
        /* landlock_restrict_self needs no_new_privs on the thread itself; a thread started before the
         * constructor set it (or one glibc started oddly) may not have it yet: seccomp's TSYNC sets it
         * later on every thread, but Landlock comes first. */
        result = syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL);
        if (result == 0) result = syscall(SYS_landlock_restrict_self, thread_switch_ruleset, 0U);
    } else {
        result = syscall(SYS_setgroups, 0, NULL);
        if (result == 0) result = syscall(SYS_setresgid, thread_switch_gid, thread_switch_gid, thread_switch_gid);
        if (result == 0) result = syscall(SYS_setresuid, thread_switch_uid, thread_switch_uid, thread_switch_uid);
    }
    thread_switch_error = result == 0 ? 0 : errno;
    __atomic_store_n(&thread_switch_done, 1, __ATOMIC_SEQ_CST);
    errno = saved;
}

static int run_on_thread(pid_t tid, int operation, uid_t uid, gid_t gid) {
    int signal = SIGRTMAX - 2;
    thread_switch_operation = operation;
    struct sigaction action, previous;
    memset(&action, 0, sizeof action);
    action.sa_handler = thread_switch_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    thread_switch_uid = uid;
    thread_switch_gid = gid;
    __atomic_store_n(&thread_switch_done, 0, __ATOMIC_SEQ_CST);
    if (sigaction(signal, &action, &previous) != 0) return -1;
    int result = 0;
    if (syscall(SYS_tgkill, getpid(), tid, signal) != 0) {
        result = -1;
    } else {
        /* The thread runs the handler as soon as it is scheduled; 5 s covers a loaded machine. */
        struct timespec pause = {0, 1000000};
        int waited = 0;
        while (!__atomic_load_n(&thread_switch_done, __ATOMIC_SEQ_CST) && waited++ < 5000) nanosleep(&pause, NULL);
        if (!__atomic_load_n(&thread_switch_done, __ATOMIC_SEQ_CST)) {
            errno = ETIMEDOUT;
            result = -1;
        } else if (thread_switch_error != 0) {
            errno = thread_switch_error;
            result = -1;
        }
    }
    int saved = errno;
    sigaction(signal, &previous, NULL);
    errno = saved;
    return result;
}

int speakersync_sandbox_switch_thread(pid_t tid, uid_t uid, gid_t gid) { return run_on_thread(tid, 0, uid, gid); }

int speakersync_sandbox_drop_bounding_set_on_thread(pid_t tid) { return run_on_thread(tid, 1, 0, 0); }

int speakersync_landlock_restrict_thread(pid_t tid, int ruleset) {
    thread_switch_ruleset = ruleset;
    return run_on_thread(tid, 2, 0, 0);
}

pid_t speakersync_current_thread_id(void) { return (pid_t)syscall(SYS_gettid); }

/* 1: the early step did not run; 0: it did; -1: it failed with early_errno. */
static int early_status = 1;
static int early_errno = 0;

/* Landlock before main: 0 not asked; > 0 the ABI enforced; -1 unavailable in this kernel; -2 failed
 * with landlock_errno on landlock_path (empty when not about one path). */
static int landlock_status = 0;
static int landlock_errno = 0;
static char landlock_path[256];

static int landlock_fail(const char *path) {
    landlock_errno = errno;
    snprintf(landlock_path, sizeof landlock_path, "%s", path ? path : "");
    landlock_status = -2;
    return -1;
}

/* The ruleset named by the arguments (`--landlock-read PATH`, `--landlock-write PATH`, each any number
 * of times), enforced on this thread and every thread an earlier constructor started (OpenBLAS's):
 * every thread started later inherits it, so the plugin's load, its init() and everything after run
 * inside it. A path this machine lacks is skipped. */
static void landlock_early(int argc, char **argv) {
    int asked = 0;
    for (int i = 2; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--landlock-read") == 0 || strcmp(argv[i], "--landlock-write") == 0) asked = 1;
    }
    if (!asked) return;
    int abi = speakersync_landlock_abi();
    if (abi < 1) {
        landlock_status = -1;
        return;
    }
    int ruleset = speakersync_landlock_create_ruleset(abi);
    if (ruleset < 0) {
        landlock_fail(NULL);
        return;
    }
    for (int i = 2; i + 1 < argc; i++) {
        int access;
        if (strcmp(argv[i], "--landlock-read") == 0) access = SPEAKERSYNC_LANDLOCK_READ;
        else if (strcmp(argv[i], "--landlock-write") == 0) access = SPEAKERSYNC_LANDLOCK_READ_WRITE;
        else continue;
        if (speakersync_landlock_allow(ruleset, abi, argv[i + 1], access) != 0) {
            if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) continue;
            landlock_fail(argv[i + 1]);
            close(ruleset);
            return;
        }
    }
    pid_t self = (pid_t)syscall(SYS_gettid);
    DIR *tasks = opendir("/proc/self/task");
    if (tasks) {
        struct dirent *entry;
        while ((entry = readdir(tasks)) != NULL) {
            pid_t tid = (pid_t)atoi(entry->d_name);
            if (tid <= 0 || tid == self) continue;
            if (speakersync_landlock_restrict_thread(tid, ruleset) != 0 && errno != ESRCH) {
                landlock_fail("/proc/self/task");
                closedir(tasks);
                close(ruleset);
                return;
            }
        }
        closedir(tasks);
    }
    if (speakersync_landlock_enforce(ruleset) != 0) {
        landlock_fail(NULL);
        return;
    }
    landlock_status = abi;
}

/* A worker started as `provider-worker … --sandbox on` empties its bounding set (as root) and sets
 * no_new_privs here, before main: both are per thread and inherited only by threads started later,
 * and the Swift runtime and Dispatch start threads before the worker's own code runs. glibc passes
 * constructors the program's arguments. Then Landlock, which needs no_new_privs. */
__attribute__((constructor)) static void speakersync_sandbox_early(int argc, char **argv, char **envp) {
    (void)envp;
    if (argc < 2 || argv == NULL || argv[1] == NULL || strcmp(argv[1], "provider-worker") != 0) return;
    int on = 0;
    for (int i = 2; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--sandbox") == 0 && strcmp(argv[i + 1], "on") == 0) on = 1;
    }
    if (!on) return;
    early_status = 0;
    if ((geteuid() == 0 && speakersync_sandbox_drop_bounding_set() != 0) || speakersync_sandbox_set_no_new_privs() != 0) {
        early_errno = errno;
        early_status = -1;
        return;
    }
    landlock_early(argc, argv);
}

int speakersync_sandbox_early_landlock(int *error, const char **path) {
    *error = landlock_errno;
    *path = landlock_path;
    return landlock_status;
}

int speakersync_sandbox_early_status(void) {
    if (early_status < 0) errno = early_errno;
    return early_status;
}

int speakersync_sandbox_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)(dumpable ? 1 : 0), 0UL, 0UL, 0UL);
}

/* ---- Landlock --------------------------------------------------------------------------------- */

/* Declared here rather than taken from <linux/landlock.h>: Debian bookworm's headers stop at ABI 2,
 * and the kernels this runs on go further (the values are the kernel's UAPI, which never changes). */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0) /* ABI 4 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)


struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

static uint64_t handled_fs(int abi) {
    uint64_t rights = (1ULL << 13) - 1; /* ABI 1: execute … make_sym */
    if (abi >= 2) rights |= LL_FS_REFER;
    if (abi >= 3) rights |= LL_FS_TRUNCATE;
    if (abi >= 5) rights |= LL_FS_IOCTL_DEV;
    return rights;
}

int speakersync_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    if (abi < 0) return 0;
    return (int)abi;
}

int speakersync_landlock_create_ruleset(int abi) {
    if (abi < 1) {
        errno = EOPNOTSUPP;
        return -1;
    }
    struct ll_ruleset_attr attr = {handled_fs(abi), 0, 0};
    size_t size = offsetof(struct ll_ruleset_attr, handled_access_net);
    if (abi >= 4) {
        /* Nothing in a worker listens: TCP bind is handled and never allowed. */
        attr.handled_access_net = LL_NET_BIND_TCP;
        size = offsetof(struct ll_ruleset_attr, scoped);
    }
    if (abi >= 6) {
        /* No abstract Unix socket and no signal outside the worker's own domain. */
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
        size = sizeof attr;
    }
    return (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0U);
}

int speakersync_landlock_allow(int ruleset, int abi, const char *path, int access) {
    uint64_t rights;
    switch (access) {
    case SPEAKERSYNC_LANDLOCK_READ:
        rights = LL_FS_READ_FILE | LL_FS_READ_DIR;
        break;
    case SPEAKERSYNC_LANDLOCK_READ_EXECUTE:
        rights = LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE;
        break;
    case SPEAKERSYNC_LANDLOCK_READ_WRITE:
        rights = LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_DIR
                 | LL_FS_MAKE_REG | LL_FS_REFER | LL_FS_TRUNCATE;
        break;
    default:
        errno = EINVAL;
        return -1;
    }
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat status;
    if (fstat(fd, &status) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    if (!S_ISDIR(status.st_mode)) rights &= LL_FILE_RIGHTS;
    rights &= handled_fs(abi);
    struct ll_path_beneath_attr rule = {rights, fd};
    long result = syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0U);
    int saved = errno;
    close(fd);
    errno = saved;
    return (int)result;
}

int speakersync_landlock_enforce(int ruleset) {
    long result = syscall(SYS_landlock_restrict_self, ruleset, 0U);
    int saved = errno;
    close(ruleset);
    errno = saved;
    return (int)result;
}

#else /* not Linux */

int speakersync_sandbox_drop_bounding_set(void) { errno = ENOSYS; return -1; }
int speakersync_sandbox_clear_capabilities(void) { errno = ENOSYS; return -1; }
int speakersync_sandbox_has_capabilities(void) { errno = ENOSYS; return -1; }
int speakersync_sandbox_bounding_has(int capability) { (void)capability; errno = ENOSYS; return -1; }
int speakersync_sandbox_switch_user(uid_t uid, gid_t gid) { (void)uid; (void)gid; errno = ENOSYS; return -1; }
int speakersync_sandbox_set_no_new_privs(void) { errno = ENOSYS; return -1; }
int speakersync_sandbox_early_status(void) { return 1; }
int speakersync_sandbox_early_landlock(int *error, const char **path) { *error = 0; *path = ""; return 0; }
int speakersync_sandbox_switch_thread(pid_t tid, uid_t uid, gid_t gid) { (void)tid; (void)uid; (void)gid; errno = ENOSYS; return -1; }
int speakersync_sandbox_drop_bounding_set_on_thread(pid_t tid) { (void)tid; errno = ENOSYS; return -1; }
int speakersync_sandbox_set_dumpable(int dumpable) { (void)dumpable; errno = ENOSYS; return -1; }
int speakersync_landlock_abi(void) { return 0; }
int speakersync_landlock_create_ruleset(int abi) { (void)abi; errno = ENOSYS; return -1; }
int speakersync_landlock_allow(int ruleset, int abi, const char *path, int access) { (void)ruleset; (void)abi; (void)path; (void)access; errno = ENOSYS; return -1; }
int speakersync_landlock_enforce(int ruleset) { (void)ruleset; errno = ENOSYS; return -1; }
int speakersync_landlock_restrict_thread(pid_t tid, int ruleset) { (void)tid; (void)ruleset; errno = ENOSYS; return -1; }
pid_t speakersync_current_thread_id(void) { return getpid(); }

#endif
