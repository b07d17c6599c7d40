/* The ABI glue of the "energy" provider: entry table, factory, descriptor and the instance vtable.
 *
 * State: the entry/factory/descriptor tables are const. The one piece of file-scope mutable state is the
 * host table pointer, written only by init() and deinit() on the host's loader thread, while no instance
 * exists, and read-only in between. Everything else lives in the per-instance struct. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "energy_baseline.h"
#include "energy_diarizer.h"
#include "energy_options.h"

static const speakersync_host_t *energy_host = NULL;

static void host_log(int32_t level, const char *format, ...) {
    const speakersync_host_t *host = energy_host;
    if (!host || !host->log) return;
    char message[256];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    host->log(host, level, message);
}

typedef struct energy_instance {
    speakersync_instance_t base; /* first, so a speakersync_instance_t* is also an energy_instance_t* */
    energy_diarizer_t diarizer;
    char session_id[64];
    char last_error[256];
} energy_instance_t;

static energy_instance_t *from_base(const speakersync_instance_t *inst) {
    return (energy_instance_t *)inst->instance_data;
}

static speakersync_status_t set_error(energy_instance_t *e, speakersync_status_t status, const char *message) {
    snprintf(e->last_error, sizeof e->last_error, "%s", message);
    return status;
}

static speakersync_status_t energy_push_audio(speakersync_instance_t *inst, const float *samples, size_t count) {
    if (!inst) return SPEAKERSYNC_ERR_INVALID_ARGUMENT;
    energy_instance_t *e = from_base(inst);
    e->last_error[0] = '\0';
    if (e->diarizer.finalized) return set_error(e, SPEAKERSYNC_ERR_BAD_STATE, "push_audio after finalize");
    if (count == 0) return SPEAKERSYNC_OK;
    if (!samples) return set_error(e, SPEAKERSYNC_ERR_INVALID_ARGUMENT, "push_audio: samples is NULL");
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(samples[i])) {
            char message[96];
            snprintf(message, sizeof message, "push_audio: sample %zu is not finite", i);
            return set_error(e, SPEAKERSYNC_ERR_INVALID_ARGUMENT, message);
        }
    }
    speakersync_status_t status = energy_diarizer_push(&e->diarizer, samples, count);
    if (status != SPEAKERSYNC_OK) return set_error(e, status, "out of memory");
    return SPEAKERSYNC_OK;
}

static speakersync_status_t energy_pull_turns(speakersync_instance_t *inst, speakersync_turn_t *out,
                                              size_t capacity, size_t *written) {
    if (!inst) return SPEAKERSYNC_ERR_INVALID_ARGUMENT;
    energy_instance_t *e = from_base(inst);
    e->last_error[0] = '\0';
    if (!written || (!out && capacity > 0))
        return set_error(e, SPEAKERSYNC_ERR_INVALID_ARGUMENT, "pull_turns: NULL out or written");
    *written = energy_diarizer_pull(&e->diarizer, out, capacity);
    return SPEAKERSYNC_OK;
}

static speakersync_status_t energy_finalize(speakersync_instance_t *inst) {
    if (!inst) return SPEAKERSYNC_ERR_INVALID_ARGUMENT;
    energy_instance_t *e = from_base(inst);
    e->last_error[0] = '\0';
    if (e->diarizer.finalized) return set_error(e, SPEAKERSYNC_ERR_BAD_STATE, "finalize called twice");
    speakersync_status_t status = energy_diarizer_finalize(&e->diarizer);
    if (status != SPEAKERSYNC_OK) return set_error(e, status, "out of memory");
    host_log(SPEAKERSYNC_LOG_DEBUG, "energy: session %s finalized: %d speakers, %zu turns", e->session_id,
             e->diarizer.cluster_count, e->diarizer.turn_count);
    return SPEAKERSYNC_OK;
}

static const char *energy_last_error(const speakersync_instance_t *inst) {
    return inst ? from_base(inst)->last_error : "instance is NULL";
}

static void energy_destroy(speakersync_instance_t *inst) {
    if (!inst) return;
    energy_instance_t *e = from_base(inst);
    energy_diarizer_free(&e->diarizer);
    free(e);
}

static void write_error(char *buffer, size_t size, const char *message) {
    if (buffer && size > 0) snprintf(buffer, size, "%s", message);
}

static speakersync_instance_t *energy_create(const speakersync_factory_t *factory,
                                             const speakersync_instance_config_t *cfg, char *error_buf,
                                             size_t error_buf_size) {
    (void)factory;
    if (!cfg || cfg->struct_size < sizeof(speakersync_instance_config_t)) {
        write_error(error_buf, error_buf_size, "instance config missing or too small");
        return NULL;
    }
    if (cfg->sample_rate != ENERGY_SAMPLE_RATE) {
        char message[96];
        snprintf(message, sizeof message, "sample_rate %u is not supported (only %d)", cfg->sample_rate,
                 ENERGY_SAMPLE_RATE);
        write_error(error_buf, error_buf_size, message);
        return NULL;
    }
    energy_options_t options;
    if (energy_options_parse(cfg->options_json, &options, error_buf, error_buf_size) != 0) return NULL;

    energy_instance_t *e = calloc(1, sizeof *e);
    if (!e || energy_diarizer_init(&e->diarizer, &options) != 0) {
        if (e) energy_diarizer_free(&e->diarizer);
        free(e);
        write_error(error_buf, error_buf_size, "out of memory");
        return NULL;
    }
    snprintf(e->session_id, sizeof e->session_id, "%s", cfg->session_id ? cfg->session_id : "");
    e->base.struct_size = sizeof(speakersync_instance_t);
    e->base.instance_data = e;
    e->base.push_audio = energy_push_audio;
    e->base.pull_turns = energy_pull_turns;
    e->base.finalize = energy_finalize;
    e->base.last_error = energy_last_error;
    e->base.destroy = energy_destroy;
    host_log(SPEAKERSYNC_LOG_DEBUG, "energy: session %s: threshold %.3g, max_speakers %d", e->session_id,
             options.threshold, options.max_speakers);
    return &e->base;
}

static const speakersync_provider_descriptor_t energy_descriptor = {
    sizeof(speakersync_provider_descriptor_t),
    SPEAKERSYNC_ENERGY_PROVIDER_ID,
    "Energy + pitch baseline",
    "1.0.0",
    "Energy VAD with pitch/spectral clustering. A baseline to exercise the plugin path, not a neural "
    "diarizer; expect poor results on real meetings.",
    SPEAKERSYNC_LATENCY_NEAR_REALTIME,
    "MIT",
    /* revision 4 */
    "",
    "synthetic meetings of 2 / 3 / 4 voices DER 1.4 / 23.6 / 23.4 %, WDER 0.2 / 22.4 / 22.4 % (collar 0.25, "
    "speakersync eval, docs/accuracy.md)",
};

static const speakersync_provider_descriptor_t *energy_describe(const speakersync_factory_t *factory) {
    (void)factory;
    return &energy_descriptor;
}

/* Revision 3: the same parse create() runs, on a throwaway result. Any thread: touches no state. */
static speakersync_status_t energy_check_options(const speakersync_factory_t *factory, const char *options_json,
                                                 char *error_buf, size_t error_buf_size) {
    (void)factory;
    energy_options_t options;
    return energy_options_parse(options_json, &options, error_buf, error_buf_size) == 0
               ? SPEAKERSYNC_OK
               : SPEAKERSYNC_ERR_INVALID_ARGUMENT;
}

static const speakersync_factory_t energy_factory = {
    sizeof(speakersync_factory_t),
    NULL,
    energy_describe,
    energy_create,
    NULL, /* embed_voice: the energy baseline has no voice embeddings */
    energy_check_options,
    NULL, /* availability (revision 4): always available */
};

static speakersync_status_t energy_init(const speakersync_host_t *host) {
    if (!host || host->struct_size < sizeof(speakersync_host_t)) return SPEAKERSYNC_ERR_INVALID_ARGUMENT;
    energy_host = host;
    return SPEAKERSYNC_OK;
}

static void energy_deinit(void) { energy_host = NULL; }

static uint32_t energy_factory_count(void) { return 1; }

static const speakersync_factory_t *energy_get_factory(uint32_t index) {
    return index == 0 ? &energy_factory : NULL;
}

static const speakersync_plugin_entry_t energy_entry = {
    sizeof(speakersync_plugin_entry_t),
    SPEAKERSYNC_PLUGIN_ABI_VERSION,
    energy_init,
    energy_deinit,
    energy_factory_count,
    energy_get_factory,
};

SPEAKERSYNC_PLUGIN_EXPORT const speakersync_plugin_entry_t *speakersync_plugin_entry(void) {
    return &energy_entry;
}
