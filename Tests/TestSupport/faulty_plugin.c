/*
 * faulty_plugin.c — a TEST-ONLY provider plugin ("faulty") that misbehaves on request, to prove that
 * the server survives its providers. Compiled by the tests with the system C compiler into a temporary
 * folder; never built by the package and never installed beside the real plugins.
 *
 * Without a fault it is the minimal plugin of docs/plugins.md: speaker 0, one turn per second of audio.
 * Options (the session's options JSON, parsed loosely):
 *   "fault":  "crash" (writes through NULL: SIGSEGV), "abort" (SIGABRT), "exit" (exit status 7),
 *             "hang" (never returns), "leak" (allocates and touches 16 MiB per call until malloc fails,
 *             then aborts, as a library out of memory does), "fail" (returns an error: not a crash)
 *   "at":     "push" (default), "create" or "finalize"
 *   "after":  how many pushes go well first (default 0)
 *   "delay_ms": each push sleeps this long first (a slow provider: a job that is surely still running
 *             when a test stops its server)
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep and pause under -std=c99 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "speakersync_plugin.h"

typedef struct faulty {
    speakersync_instance_t base;
    char fault[16];
    char at[16];
    long after;
    long delay_ms;
    long pushes;
    uint64_t samples, emitted;
} faulty_t;

/* The string value of "key" in a flat JSON object, or "" (enough for the tests' own options). */
static void option_string(const char *json, const char *key, char *out, size_t size) {
    out[0] = 0;
    if (!json) return;
    char pattern[32];
    snprintf(pattern, sizeof pattern, "\"%s\"", key);
    const char *at = strstr(json, pattern);
    if (!at) return;
    at = strchr(at + strlen(pattern), ':');
    if (!at) return;
    at++;
    while (*at == ' ') at++;
    if (*at == '"') {
        at++;
        size_t n = 0;
        while (at[n] && at[n] != '"' && n + 1 < size) n++;
        memcpy(out, at, n);
        out[n] = 0;
    } else {
        size_t n = 0;
        while (at[n] && at[n] != ',' && at[n] != '}' && n + 1 < size) n++;
        memcpy(out, at, n);
        out[n] = 0;
    }
}

static void misbehave(const char *fault) {
    if (strcmp(fault, "crash") == 0) {
        volatile int *nowhere = NULL;
        *nowhere = 1;
    } else if (strcmp(fault, "abort") == 0) {
        abort();
    } else if (strcmp(fault, "exit") == 0) {
        exit(7);
    } else if (strcmp(fault, "hang") == 0) {
        for (;;) pause();
    } else if (strcmp(fault, "leak") == 0) {
        for (;;) {
            char *block = malloc(16u << 20);
            if (!block) abort();
            memset(block, 1, 16u << 20);
        }
    }
}

static int due(faulty_t *f, const char *where) {
    return f->fault[0] && strcmp(f->at, where) == 0 && f->pushes >= f->after;
}

static const char *last_error(const speakersync_instance_t *inst) {
    return ((const faulty_t *)inst)->fault[0] && strcmp(((const faulty_t *)inst)->fault, "fail") == 0 ? "faulty: asked to fail" : "";
}

static speakersync_status_t push(speakersync_instance_t *inst, const float *s, size_t n) {
    faulty_t *f = (faulty_t *)inst;
    (void)s;
    if (f->delay_ms > 0) {
        struct timespec delay = {f->delay_ms / 1000, (f->delay_ms % 1000) * 1000000L};
        nanosleep(&delay, NULL);
    }
    if (due(f, "push")) {
        if (strcmp(f->fault, "fail") == 0) return SPEAKERSYNC_ERR_INTERNAL;
        misbehave(f->fault);
    }
    f->pushes++;
    f->samples += n;
    return SPEAKERSYNC_OK;
}

static speakersync_status_t pull(speakersync_instance_t *inst, speakersync_turn_t *out, size_t cap, size_t *written) {
    faulty_t *f = (faulty_t *)inst;
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
    faulty_t *f = (faulty_t *)inst;
    if (due(f, "finalize")) misbehave(f->fault);
    return SPEAKERSYNC_OK;
}

static void destroy(speakersync_instance_t *inst) { free(inst); }

static speakersync_instance_t *create(const speakersync_factory_t *factory, const speakersync_instance_config_t *cfg,
                                      char *err, size_t err_size) {
    (void)factory;
    faulty_t *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    char number[32];
    option_string(cfg->options_json, "fault", f->fault, sizeof f->fault);
    option_string(cfg->options_json, "at", f->at, sizeof f->at);
    if (!f->at[0]) strcpy(f->at, "push");
    option_string(cfg->options_json, "after", number, sizeof number);
    f->after = number[0] ? strtol(number, NULL, 10) : 0;
    option_string(cfg->options_json, "delay_ms", number, sizeof number);
    f->delay_ms = number[0] ? strtol(number, NULL, 10) : 0;
    if (due(f, "create")) misbehave(f->fault);
    f->base = (speakersync_instance_t){sizeof(speakersync_instance_t), f, push, pull, finalize, last_error, destroy, NULL};
    return &f->base;
}

static const speakersync_provider_descriptor_t descriptor = {
    sizeof descriptor, "faulty", "Faulty (test only)", "1.0.0",
    "Crashes, aborts, exits, hangs or leaks on request: a test fixture, never a real provider.",
    SPEAKERSYNC_LATENCY_REALTIME, "MIT"};
static const speakersync_provider_descriptor_t *describe(const speakersync_factory_t *f) {
    (void)f;
    return &descriptor;
}
/* A revision-1 factory: the table ends after create. */
static const speakersync_factory_t factory = {offsetof(speakersync_factory_t, embed_voice), NULL, describe, create, NULL, NULL};

static speakersync_status_t init(const speakersync_host_t *host) {
    (void)host;
    return SPEAKERSYNC_OK;
}
static void deinit(void) {}
static uint32_t count(void) { return 1; }
static const speakersync_factory_t *get(uint32_t i) { return i == 0 ? &factory : NULL; }
static const speakersync_plugin_entry_t entry = {sizeof entry, SPEAKERSYNC_PLUGIN_ABI_VERSION, init, deinit, count, get};

SPEAKERSYNC_PLUGIN_EXPORT const speakersync_plugin_entry_t *speakersync_plugin_entry(void) { return &entry; }
