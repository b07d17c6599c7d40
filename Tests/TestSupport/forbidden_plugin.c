/*
 * forbidden_plugin.c — a TEST-ONLY provider plugin ("forbidden") that tries what the provider sandbox
 * must refuse (docs/security.md, "The provider sandbox") and reports each outcome. Compiled by the
 * tests into a temporary folder, like faulty_plugin.c; never built by the package.
 *
 * A session created with {"probe":true, ...} does not start: its create fails with a report such as
 *   "probe read_file=refused(13) connect_unix=refused(1) inet_socket=refused(1) execve=refused(1) ptrace=refused(1)"
 * where "allowed" means the action succeeded. Options:
 *   "read_file":    a file to open and read (the admin key file)
 *   "connect_unix": a Unix socket to connect to (PostgreSQL's)
 *   "ptrace":       true: ptrace(PTRACE_ATTACH) the worker's parent, the server (stopped and let go at
 *                   once if it works; only asked where the sandbox should refuse it)
 *   "write_file":   a file to create (in a folder everyone may write: only Landlock stops it)
 *   "write_temp":   true: create a file in $TMPDIR (the worker's private temporary folder)
 *   "other_pids":   comma-separated pids of other workers: open /proc/PID/mem and /proc/PID/environ of
 *                   each (skipping its own); "allowed" if any of them opened
 * Always tried: socket(AF_INET) and execve("/bin/sh") in a forked child. The report starts with what
 * init() found, before any of the sandbox's later layers: its own provider config section
 * ("own_config=present|absent"), the `falcon` provider's ("other_config=present|absent"), and, when its
 * section names {"init_read_file": PATH}, "init_read_file=…" for reading that file during init. Without
 * "probe" it is a minimal plugin: speaker 0, a turn per second.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include "speakersync_plugin.h"

typedef struct forbidden {
    speakersync_instance_t base;
    uint64_t samples, emitted;
} forbidden_t;

/* The string value of "key" in a flat JSON object, or "" (enough for the tests' own options). */
static void option_string(const char *json, const char *key, char *out, size_t size) {
    out[0] = 0;
    if (!json) return;
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\"", key);
    const char *at = strstr(json, pattern);
    if (!at) return;
    at = strchr(at + strlen(pattern), ':');
    if (!at) return;
    at++;
    while (*at == ' ') at++;
    if (*at != '"') {
        size_t n = 0;
        while (at[n] && at[n] != ',' && at[n] != '}' && n + 1 < size) n++;
        memcpy(out, at, n);
        out[n] = 0;
        return;
    }
    at++;
    size_t n = 0;
    while (at[n] && at[n] != '"' && n + 1 < size) n++;
    memcpy(out, at, n);
    out[n] = 0;
}

static void report(char *out, size_t size, const char *name, int allowed, int error) {
    size_t used = strlen(out);
    if (allowed) snprintf(out + used, size - used, " %s=allowed", name);
    else snprintf(out + used, size - used, " %s=refused(%d)", name, error);
}

static void try_read_file(const char *path, char *out, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int error = errno;
    char byte;
    int allowed = fd >= 0 && read(fd, &byte, 1) >= 0;
    if (fd >= 0 && !allowed) error = errno;
    if (fd >= 0) close(fd);
    report(out, size, "read_file", allowed, error);
}

static void try_connect_unix(const char *path, char *out, size_t size) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int error = errno, allowed = 0;
    if (fd >= 0) {
        struct sockaddr_un address;
        memset(&address, 0, sizeof address);
        address.sun_family = AF_UNIX;
        strncpy(address.sun_path, path, sizeof address.sun_path - 1);
        allowed = connect(fd, (struct sockaddr *)&address, sizeof address) == 0;
        error = errno;
        close(fd);
    }
    report(out, size, "connect_unix", allowed, error);
}

static void try_inet_socket(char *out, size_t size) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int error = errno;
    if (fd >= 0) close(fd);
    report(out, size, "inet_socket", fd >= 0, error);
}

/* In a child, so a shell that did start replaces nothing of the worker: its exit status 0 means
 * execve worked; the child's own exit status otherwise carries execve's errno. */
static void try_execve(char *out, size_t size) {
    pid_t child = fork();
    if (child < 0) {
        report(out, size, "execve", 0, errno);
        return;
    }
    if (child == 0) {
        char *argv[] = {"/bin/sh", "-c", "exit 0", NULL};
        char *envp[] = {NULL};
        execve("/bin/sh", argv, envp);
        _exit(errno & 0x7f ? errno & 0x7f : 127);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    int allowed = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    report(out, size, "execve", allowed, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static void try_ptrace(char *out, size_t size) {
    pid_t parent = getppid();
    long result = ptrace(PTRACE_ATTACH, parent, NULL, NULL);
    int error = errno;
    if (result == 0) {
        /* It worked: let the server go at once. */
        waitpid(parent, NULL, __WALL);
        ptrace(PTRACE_DETACH, parent, NULL, NULL);
    }
    report(out, size, "ptrace", result == 0, error);
}

static void try_write_file(const char *name, const char *path, char *out, size_t size) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int error = errno;
    int allowed = fd >= 0 && write(fd, "x", 1) == 1;
    if (fd >= 0) {
        close(fd);
        unlink(path);
    }
    report(out, size, name, allowed, error);
}

static void try_other_workers(const char *pids, char *out, size_t size) {
    char copy[256];
    snprintf(copy, sizeof copy, "%s", pids);
    int allowed = 0, error = 0;
    for (char *token = strtok(copy, ","); token; token = strtok(NULL, ",")) {
        pid_t pid = (pid_t)atoi(token);
        if (pid <= 0 || pid == getpid()) continue;
        const char *files[] = {"mem", "environ"};
        for (int i = 0; i < 2; i++) {
            char path[64];
            snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, files[i]);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                allowed = 1;
                close(fd);
            } else {
                error = errno;
            }
        }
    }
    report(out, size, "other_worker", allowed, error);
}

/* What init() found, reported by every probe. */
static char init_report[512];

static speakersync_status_t push(speakersync_instance_t *inst, const float *s, size_t n) {
    (void)s;
    ((forbidden_t *)inst)->samples += n;
    return SPEAKERSYNC_OK;
}

static speakersync_status_t pull(speakersync_instance_t *inst, speakersync_turn_t *out, size_t cap, size_t *written) {
    forbidden_t *f = (forbidden_t *)inst;
    size_t w = 0;
    while (w < cap && (f->emitted + 1) * SPEAKERSYNC_SAMPLE_RATE <= f->samples) {
        speakersync_turn_t t = {f->emitted + 1, 0, (double)f->emitted, (double)f->emitted + 1, 0.5f, 0};
        out[w++] = t;
        f->emitted++;
    }
    *written = w;
    return SPEAKERSYNC_OK;
}

static speakersync_status_t finalize(speakersync_instance_t *inst) {
    (void)inst;
    return SPEAKERSYNC_OK;
}

static const char *last_error(const speakersync_instance_t *inst) {
    (void)inst;
    return "";
}

static void destroy(speakersync_instance_t *inst) { free(inst); }

static speakersync_instance_t *create(const speakersync_factory_t *factory, const speakersync_instance_config_t *cfg,
                                      char *err, size_t err_size) {
    (void)factory;
    char probe[16], path[512];
    option_string(cfg->options_json, "probe", probe, sizeof probe);
    if (strcmp(probe, "true") == 0) {
        snprintf(err, err_size, "probe%s", init_report);
        option_string(cfg->options_json, "read_file", path, sizeof path);
        if (path[0]) try_read_file(path, err, err_size);
        option_string(cfg->options_json, "connect_unix", path, sizeof path);
        if (path[0]) try_connect_unix(path, err, err_size);
        try_inet_socket(err, err_size);
        try_execve(err, err_size);
        option_string(cfg->options_json, "ptrace", probe, sizeof probe);
        if (strcmp(probe, "true") == 0) try_ptrace(err, err_size);
        option_string(cfg->options_json, "write_file", path, sizeof path);
        if (path[0]) try_write_file("write_file", path, err, err_size);
        option_string(cfg->options_json, "write_temp", probe, sizeof probe);
        const char *temporary = getenv("TMPDIR");
        if (strcmp(probe, "true") == 0 && temporary) {
            snprintf(path, sizeof path, "%s/forbidden-probe", temporary);
            try_write_file("write_temp", path, err, err_size);
        }
        option_string(cfg->options_json, "other_pids", path, sizeof path);
        if (path[0]) try_other_workers(path, err, err_size);
        return NULL;
    }
    forbidden_t *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    f->base = (speakersync_instance_t){sizeof(speakersync_instance_t), f, push, pull, finalize, last_error, destroy, NULL};
    return &f->base;
}

static const speakersync_provider_descriptor_t descriptor = {
    sizeof descriptor, "forbidden", "Forbidden actions (test only)", "1.0.0",
    "Tries what the provider sandbox refuses and reports each outcome: a test fixture, never a real provider.",
    SPEAKERSYNC_LATENCY_REALTIME, "MIT"};
static const speakersync_provider_descriptor_t *describe(const speakersync_factory_t *f) {
    (void)f;
    return &descriptor;
}
/* A revision-1 factory: the table ends after create. */
static const speakersync_factory_t factory = {offsetof(speakersync_factory_t, embed_voice), NULL, describe, create, NULL, NULL};

static speakersync_status_t init(const speakersync_host_t *host) {
    init_report[0] = 0;
    const char *own = NULL, *other = NULL;
    if (host->struct_size >= offsetof(speakersync_host_t, provider_config) + sizeof host->provider_config && host->provider_config) {
        own = host->provider_config(host, "forbidden");
        other = host->provider_config(host, "falcon");
    }
    size_t used = strlen(init_report);
    snprintf(init_report + used, sizeof init_report - used, " own_config=%s other_config=%s", own ? "present" : "absent",
             other ? "present" : "absent");
    char path[256];
    option_string(own, "init_read_file", path, sizeof path);
    if (path[0]) {
        /* try_read_file reports as "read_file": rename it for the report. */
        char part[128] = "";
        try_read_file(path, part, sizeof part);
        used = strlen(init_report);
        snprintf(init_report + used, sizeof init_report - used, " init_%s", part + 1);
    }
    return SPEAKERSYNC_OK;
}
static void deinit(void) {}
static uint32_t count(void) { return 1; }
static const speakersync_factory_t *get(uint32_t i) { return i == 0 ? &factory : NULL; }
static const speakersync_plugin_entry_t entry = {sizeof entry, SPEAKERSYNC_PLUGIN_ABI_VERSION, init, deinit, count, get};

SPEAKERSYNC_PLUGIN_EXPORT const speakersync_plugin_entry_t *speakersync_plugin_entry(void) { return &entry; }
