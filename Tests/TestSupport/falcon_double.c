/*
 * A test double of Picovoice Falcon's C library (libpv_falcon): the same exported symbols and
 * signatures as pvfalcon 2.0.1's, compiled by the tests (TestPlugins.falconDouble) so the `falcon`
 * plugin's windowing, revision and error paths run without Picovoice's servers.
 *
 * What it does depends on the AccessKey, as the real one's behaviour does:
 *   "double-ok"                  init succeeds; process diarizes as below.
 *   "double-activation-fails…"   init fails with ACTIVATION_ERROR (8) and an error stack that quotes the
 *                                key, as Picovoice's messages do ("Failed to parse AccessKey `…`").
 *   "double-process-fails-N"     process succeeds N times (counted over the process), then fails with
 *                                RUNTIME_ERROR (7) and an error stack.
 *
 * Diarization: 0.25 s blocks; a block with RMS below 0.01 is silence; otherwise its zero-crossing rate
 * says which voice it is (below 0.0375 crossings per sample, about 300 Hz for a tone: one voice; above:
 * another). Tags are numbered in order of first appearance within each call, so two calls on
 * overlapping audio may tag the same voice differently, as the real engine may. Consecutive blocks of
 * one voice make one segment.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int32_t pv_status_t;
typedef struct pv_falcon { int mode; int fail_after; } pv_falcon_t;
typedef struct { float start_sec; float end_sec; int32_t speaker_tag; } pv_segment_t;

enum { MODE_OK = 0, MODE_PROCESS_FAILS = 1 };

static __thread char *last_stack[4];
static __thread int32_t last_depth;
static int process_calls;

static void set_stack(const char *a, const char *b) {
    for (int i = 0; i < last_depth; i++) { free(last_stack[i]); }
    last_depth = 0;
    last_stack[last_depth++] = strdup(a);
    if (b) { last_stack[last_depth++] = strdup(b); }
}

const char *pv_falcon_version(void) { return "2.0.1-test-double"; }
int32_t pv_sample_rate(void) { return 16000; }
void pv_set_sdk(const char *sdk) { (void)sdk; }

const char *pv_status_to_string(pv_status_t status) {
    static const char *names[] = {"SUCCESS", "OUT_OF_MEMORY", "IO_ERROR", "INVALID_ARGUMENT", "STOP_ITERATION", "KEY_ERROR",
                                  "INVALID_STATE", "RUNTIME_ERROR", "ACTIVATION_ERROR", "ACTIVATION_LIMIT_REACHED",
                                  "ACTIVATION_THROTTLED", "ACTIVATION_REFUSED"};
    return (status >= 0 && status <= 11) ? names[status] : NULL;
}

pv_status_t pv_get_error_stack(char ***message_stack, int32_t *message_stack_depth) {
    if (!message_stack || !message_stack_depth) { return 3; }
    char **copy = calloc((size_t)last_depth + 1, sizeof(char *));
    for (int i = 0; i < last_depth; i++) { copy[i] = strdup(last_stack[i]); }
    *message_stack = copy;
    *message_stack_depth = last_depth;
    return 0;
}

void pv_free_error_stack(char **message_stack) {
    if (!message_stack) { return; }
    for (int i = 0; message_stack[i]; i++) { free(message_stack[i]); }
    free(message_stack);
}

pv_status_t pv_falcon_init(const char *access_key, const char *model_path, const char *device, pv_falcon_t **object) {
    if (!access_key || !model_path || !device || !object) { return 3; }
    char message[256];
    if (strncmp(access_key, "double-activation-fails", 23) == 0) {
        snprintf(message, sizeof message, "Failed to activate AccessKey `%s`: the activation server could not be reached", access_key);
        set_stack("Picovoice Error.", message);
        return 8;
    }
    pv_falcon_t *falcon = calloc(1, sizeof *falcon);
    if (strncmp(access_key, "double-process-fails-", 21) == 0) {
        falcon->mode = MODE_PROCESS_FAILS;
        falcon->fail_after = atoi(access_key + 21);
    } else if (strcmp(access_key, "double-ok") != 0) {
        free(falcon);
        snprintf(message, sizeof message, "Failed to parse AccessKey `%s`.", access_key);
        set_stack("AccessKey is invalid.", message);
        return 3;
    }
    *object = falcon;
    return 0;
}

void pv_falcon_delete(pv_falcon_t *object) { free(object); }

pv_status_t pv_falcon_process(pv_falcon_t *object, const int16_t *pcm, int32_t num_samples, int32_t *num_segments,
                              pv_segment_t **segments) {
    if (!object || !pcm || num_samples <= 0 || !num_segments || !segments) { return 3; }
    int call = __atomic_add_fetch(&process_calls, 1, __ATOMIC_SEQ_CST);
    if (object->mode == MODE_PROCESS_FAILS && call > object->fail_after) {
        set_stack("Picovoice Error.", "Falcon test double: process failed as its AccessKey asked");
        return 7;
    }
    const int block = 4000;
    int blocks = (num_samples + block - 1) / block;
    pv_segment_t *out = calloc((size_t)blocks + 1, sizeof *out);
    int count = 0, tags[2] = {-1, -1}, next_tag = 0, open_voice = -1;
    for (int b = 0; b < blocks; b++) {
        int start = b * block, end = start + block < num_samples ? start + block : num_samples;
        double energy = 0;
        int crossings = 0;
        for (int i = start; i < end; i++) {
            double x = pcm[i] / 32768.0;
            energy += x * x;
            if (i > start && ((pcm[i] >= 0) != (pcm[i - 1] >= 0))) { crossings++; }
        }
        /* RMS below 0.01, without libm. */
        int voice = energy / (end - start) < 0.0001 ? -1 : ((double)crossings / (end - start) < 0.0375 ? 0 : 1);
        if (voice >= 0 && tags[voice] < 0) { tags[voice] = next_tag++; }
        if (voice >= 0 && voice == open_voice) {
            out[count - 1].end_sec = (float)end / 16000.0f;
        } else if (voice >= 0) {
            out[count].start_sec = (float)start / 16000.0f;
            out[count].end_sec = (float)end / 16000.0f;
            out[count].speaker_tag = tags[voice];
            count++;
        }
        open_voice = voice;
    }
    *num_segments = count;
    *segments = out;
    return 0;
}

void pv_falcon_segments_delete(pv_segment_t *segments) { free(segments); }
