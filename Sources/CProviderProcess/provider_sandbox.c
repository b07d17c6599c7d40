/*
 * provider_sandbox.c — see include/provider_sandbox.h and docs/security.md ("The provider sandbox").
 *
 * Nothing here decides policy beyond the seccomp tables: which user, which paths and whether the
 * network is allowed come from the caller (ProviderSandbox in Swift).
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
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
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

/* ---- seccomp ---------------------------------------------------------------------------------- */

#if defined(__x86_64__)
#define SANDBOX_AUDIT_ARCH AUDIT_ARCH_X86_64
#define SANDBOX_X32_BIT 0x40000000U
#elif defined(__aarch64__)
#define SANDBOX_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC
#define SECCOMP_FILTER_FLAG_TSYNC 1UL
#endif
#ifndef SOCK_TYPE_MASK
#define SOCK_TYPE_MASK 0xf
#endif

/* Namespaces a diarizer never creates (CLONE_NEWUSER above all: the door to most unprivileged kernel
 * attack surface). CLONE_NEWTIME shares its bit with clone()'s exit-signal byte, but no signal number
 * reaches 0x80, so a thread or fork never matches it. */
#define SANDBOX_NAMESPACE_FLAGS                                                                            \
    (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | 0x02000000 /* CLONE_NEWCGROUP */ \
     | 0x00000080 /* CLONE_NEWTIME */)

#define ARG_LOW(n) (offsetof(struct seccomp_data, args) + (n) * sizeof(uint64_t)) /* little-endian: low word first */

/* System calls answered with EPERM, whatever their arguments (docs/security.md lists them with why). */
static const int denied_syscalls[] = {
    /* another process's memory and execution */
    __NR_ptrace,
#ifdef __NR_pidfd_getfd
    __NR_pidfd_getfd,
#endif
    /* new programs: everything the worker runs is loaded before the filter, and an executed program
     * would not be the plugin the operator installed */
    __NR_execve, __NR_execveat,
    /* mounts and the filesystem root */
    __NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot,
#ifdef __NR_fsopen
    __NR_fsopen, __NR_fsconfig, __NR_fsmount, __NR_fspick, __NR_move_mount, __NR_open_tree,
#endif
#ifdef __NR_mount_setattr
    __NR_mount_setattr,
#endif
    /* namespaces */
    __NR_unshare, __NR_setns,
    /* the kernel and the machine */
    __NR_kexec_load,
#ifdef __NR_kexec_file_load
    __NR_kexec_file_load,
#endif
    __NR_reboot, __NR_init_module, __NR_finit_module, __NR_delete_module, __NR_swapon, __NR_swapoff, __NR_acct,
    __NR_syslog, __NR_open_by_handle_at,
#ifdef __NR_iopl
    __NR_iopl, __NR_ioperm,
#endif
    /* kernel attack surface an unprivileged process can reach, which a diarizer never needs */
    __NR_bpf, __NR_perf_event_open, __NR_keyctl, __NR_add_key, __NR_request_key, __NR_userfaultfd,
#ifdef __NR_io_uring_setup
    /* io_uring runs socket, connect and open operations that a seccomp filter never sees */
    __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
#endif
};

#define MAX_PROGRAM 256

struct program {
    struct sock_filter code[MAX_PROGRAM];
    unsigned short length;
    int overflow;
};

static unsigned short emit(struct program *p, unsigned short code, unsigned char jt, unsigned char jf, uint32_t k) {
    if (p->length >= MAX_PROGRAM) {
        p->overflow = 1;
        return p->length;
    }
    struct sock_filter instruction = BPF_JUMP(code, k, jt, jf);
    p->code[p->length] = instruction;
    return p->length++;
}

static void ret(struct program *p, uint32_t value) { emit(p, BPF_RET | BPF_K, 0, 0, value); }

/* "If nr != `nr`, skip the block that follows": returns the jump to patch once the block is written. */
static unsigned short if_syscall(struct program *p, int nr) { return emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, (uint32_t)nr); }

static void end_block(struct program *p, unsigned short jump) {
    unsigned length = (unsigned)(p->length - jump - 1);
    if (length > 255) p->overflow = 1;
    p->code[jump].jf = (unsigned char)length;
}

static void check_architecture(struct program *p) {
    emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, arch));
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, SANDBOX_AUDIT_ARCH);
    ret(p, SECCOMP_RET_KILL_PROCESS);
    emit(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, nr));
#ifdef SANDBOX_X32_BIT
    /* x32 system calls share the x86_64 architecture value: refuse them as a whole. */
    emit(p, BPF_JMP | BPF_JGE | BPF_K, 0, 1, SANDBOX_X32_BIT);
    ret(p, SECCOMP_RET_KILL_PROCESS);
#endif
}

static int install(struct program *p) {
    if (p->overflow) {
        errno = E2BIG;
        return -1;
    }
    struct sock_fprog program = {p->length, p->code};
    /* TSYNC: every thread of the process, not only the caller (plugins start threads while loading). */
    long result = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program);
    if (result > 0) {
        /* TSYNC names the thread that could not be synchronised. */
        errno = EAGAIN;
        return -1;
    }
    return (int)result;
}

int speakersync_seccomp_supported(void) {
#ifdef SANDBOX_AUDIT_ARCH
    return 1;
#else
    return 0;
#endif
}

int speakersync_seccomp_install(pid_t self, int allow_inet) {
#ifndef SANDBOX_AUDIT_ARCH
    (void)self;
    (void)allow_inet;
    errno = ENOSYS;
    return -1;
#else
    static struct program p;
    memset(&p, 0, sizeof p);
    const uint32_t deny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
    check_architecture(&p);
    for (size_t i = 0; i < sizeof denied_syscalls / sizeof denied_syscalls[0]; i++) {
        emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, (uint32_t)denied_syscalls[i]);
        ret(&p, deny);
    }

    /* socket(): AF_INET and AF_INET6, stream or datagram, when the network is allowed, and nothing
     * else (no AF_UNIX: the worker's one Unix socket, to the server, is inherited, and a new one could
     * reach PostgreSQL's; no AF_NETLINK, AF_PACKET, raw sockets). */
    unsigned short jump = if_syscall(&p, __NR_socket);
    if (!allow_inet) ret(&p, deny);
    emit(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0, ARG_LOW(0));
    emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 2, 0, AF_INET);
    emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, AF_INET6);
    ret(&p, deny);
    emit(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0, ARG_LOW(1));
    emit(&p, BPF_ALU | BPF_AND | BPF_K, 0, 0, SOCK_TYPE_MASK);
    emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 2, 0, SOCK_STREAM);
    emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, SOCK_DGRAM);
    ret(&p, deny);
    ret(&p, SECCOMP_RET_ALLOW);
    end_block(&p, jump);

    /* socketpair(): AF_UNIX only. Swift's crash handler talks to its backtracer over one; a pair
     * connects to nothing outside the process. */
    jump = if_syscall(&p, __NR_socketpair);
    emit(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0, ARG_LOW(0));
    emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, AF_UNIX);
    ret(&p, deny);
    ret(&p, SECCOMP_RET_ALLOW);
    end_block(&p, jump);

    /* process_vm_readv/writev: only the worker's own memory (`self`: a library may read itself this
     * way). The kernel reads the pid as a 32-bit pid_t, so the low word is the whole argument. */
    const int memory_calls[] = {__NR_process_vm_readv, __NR_process_vm_writev};
    for (int i = 0; i < 2; i++) {
        jump = if_syscall(&p, memory_calls[i]);
        emit(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0, ARG_LOW(0));
        emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 1, 0, (uint32_t)self);
        ret(&p, deny);
        ret(&p, SECCOMP_RET_ALLOW);
        end_block(&p, jump);
    }

    /* clone(): threads and processes, never new namespaces (flags are the first argument on both
     * architectures). */
    jump = if_syscall(&p, __NR_clone);
    emit(&p, BPF_LD | BPF_W | BPF_ABS, 0, 0, ARG_LOW(0));
    emit(&p, BPF_JMP | BPF_JSET | BPF_K, 0, 1, SANDBOX_NAMESPACE_FLAGS);
    ret(&p, deny);
    ret(&p, SECCOMP_RET_ALLOW);
    end_block(&p, jump);
#ifdef __NR_clone3
    /* clone3's flags are behind a pointer: ENOSYS makes glibc (2.34+) fall back to clone, above. */
    emit(&p, BPF_JMP | BPF_JEQ | BPF_K, 0, 1, __NR_clone3);
    ret(&p, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
#endif
    ret(&p, SECCOMP_RET_ALLOW);
    return install(&p);
#endif
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
int speakersync_seccomp_install(pid_t self, int allow_inet) { (void)self; (void)allow_inet; errno = ENOSYS; return -1; }
int speakersync_seccomp_supported(void) { return 0; }
int speakersync_landlock_abi(void) { return 0; }
int speakersync_landlock_create_ruleset(int abi) { (void)abi; errno = ENOSYS; return -1; }
int speakersync_landlock_allow(int ruleset, int abi, const char *path, int access) { (void)ruleset; (void)abi; (void)path; (void)access; errno = ENOSYS; return -1; }
int speakersync_landlock_enforce(int ruleset) { (void)ruleset; errno = ENOSYS; return -1; }
int speakersync_landlock_restrict_thread(pid_t tid, int ruleset) { (void)tid; (void)ruleset; errno = ENOSYS; return -1; }
pid_t speakersync_current_thread_id(void) { return getpid(); }

#endif
