/* The energy baseline's diarizer: VAD -> windows -> online leader clustering -> turns with revisions.
 * One per instance; no global state. Not thread-safe: the ABI guarantees one caller at a time. */
#ifndef ENERGY_DIARIZER_H
#define ENERGY_DIARIZER_H

#include <stddef.h>
#include <stdint.h>

#include "energy_frame.h"
#include "energy_options.h"
#include "speakersync_plugin.h"

#define ENERGY_FEATURE_DIMS (1 + ENERGY_BANDS) /* pitch, then band balance */
#define ENERGY_WINDOW_ACTIVE_FRAMES 50         /* a window closes after 0.5 s of active speech */

typedef struct energy_cluster {
    double mean[ENERGY_FEATURE_DIMS];
    int observations[ENERGY_FEATURE_DIMS]; /* per dimension: pitch is missing in unvoiced windows */
    int windows;
} energy_cluster_t;

/** Every turn ever emitted, so finalize can revise them. */
typedef struct energy_turn_record {
    uint64_t id;
    int32_t speaker;
    uint32_t segment;
    double start_seconds, end_seconds;
    double confidence_sum;
    int windows;
    int removed;
} energy_turn_record_t;

typedef struct energy_diarizer {
    energy_options_t options;
    energy_frame_analyzer_t analyzer;
    float frame[ENERGY_FRAME_SAMPLES];
    size_t frame_fill;
    uint64_t frame_index;

    /* VAD */
    float noise_floor_db;
    int noise_floor_ready;
    int in_speech;
    uint64_t segment_start_frame, last_active_frame;
    uint32_t segment_number;

    /* the window being filled */
    uint64_t window_start_frame;
    int window_active;
    double window_band_sum[ENERGY_BANDS];
    float window_pitches[ENERGY_WINDOW_ACTIVE_FRAMES];
    int window_voiced;

    energy_cluster_t clusters[ENERGY_MAX_SPEAKERS_LIMIT];
    int cluster_count;
    int previous_speaker; /* speaker of the previous window in this segment, or -1 */
    long open_turn;       /* index into turns, or -1 */

    energy_turn_record_t *turns;
    size_t turn_count, turn_capacity;
    speakersync_turn_t *pending; /* latest revision of each changed turn, in emission order */
    size_t pending_head, pending_count, pending_capacity;
    uint64_t next_turn_id;
    int finalized;
} energy_diarizer_t;

/** 0 on success, -1 when out of memory. */
ENERGY_INTERNAL int energy_diarizer_init(energy_diarizer_t *d, const energy_options_t *options);
ENERGY_INTERNAL void energy_diarizer_free(energy_diarizer_t *d);

/** Returns SPEAKERSYNC_OK or SPEAKERSYNC_ERR_OUT_OF_MEMORY. Samples must be finite (checked by the caller). */
ENERGY_INTERNAL speakersync_status_t energy_diarizer_push(energy_diarizer_t *d, const float *samples, size_t count);
ENERGY_INTERNAL speakersync_status_t energy_diarizer_finalize(energy_diarizer_t *d);
ENERGY_INTERNAL size_t energy_diarizer_pull(energy_diarizer_t *d, speakersync_turn_t *out, size_t capacity);

#endif
