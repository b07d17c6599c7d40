/*
 * provider_seccomp.c — the worker's seccomp filter: see include/provider_sandbox.h and
 * docs/security.md ("The provider sandbox"), which lists every denied call with why. Kept apart from
 * provider_sandbox.c (identity, capabilities, Landlock) because it is the one part that is policy:
 * the tables of system calls and arguments a diarizer may use.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "provider_sandbox.h"

#include <errno.h>

#if defined(__linux__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

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

#else /* not Linux */

int speakersync_seccomp_install(pid_t self, int allow_inet) { (void)self; (void)allow_inet; errno = ENOSYS; return -1; }
int speakersync_seccomp_supported(void) { return 0; }

#endif
