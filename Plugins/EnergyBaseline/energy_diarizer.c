/* Energy + pitch baseline diarization. Deliberately simple and honest about it:
 *  - VAD: frame energy against an adaptive noise floor (falls fast, rises slowly), 250 ms hangover.
 *  - Windows: every 0.5 s of active speech inside a speech segment gives one feature vector:
 *    median pitch (semitones) and mean band balance (dB), scaled to comparable units.
 *  - Clustering: online leader clustering; a window joins the nearest running centroid when closer than
 *    `threshold`, otherwise founds a new speaker (up to max_speakers).
 *  - Turns: consecutive same-speaker windows of one segment form a turn; the open turn is re-emitted under
 *    the same id as it grows, and closed at the pause. finalize folds one-window speakers into their nearest
 *    neighbour and merges the turns that become adjacent (revisions and removals).
 */
#include "energy_diarizer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_SECONDS 0.01
#define VAD_ON_DB 10.0f            /* above the noise floor */
#define VAD_ABSOLUTE_MIN_DB -65.0f /* never speech below this */
#define HANGOVER_FRAMES 25         /* 250 ms of quiet closes a segment */
#define MIN_WINDOW_ACTIVE 15       /* a leftover shorter than 150 ms extends the open turn instead */
#define MIN_VOICED_FOR_PITCH 5
#define PITCH_SCALE_SEMITONES 3.0
#define BAND_SCALE_DB 4.0
#define PITCH_WEIGHT 3.0
#define CONTINUITY_FACTOR 0.85 /* the previous window's speaker looks this much closer */
#define CENTROID_MEMORY 30     /* running mean over about the last 30 windows */

static int grow(void **buffer, size_t *capacity, size_t element_size, size_t needed) {
    if (needed <= *capacity) return 0;
    size_t next = *capacity ? *capacity * 2 : 64;
    while (next < needed) next *= 2;
    void *p = realloc(*buffer, next * element_size);
    if (!p) return -1;
    *buffer = p;
    *capacity = next;
    return 0;
}

int energy_diarizer_init(energy_diarizer_t *d, const energy_options_t *options) {
    memset(d, 0, sizeof *d);
    d->options = *options;
    energy_frame_analyzer_init(&d->analyzer);
    d->previous_speaker = -1;
    d->open_turn = -1;
    d->next_turn_id = 1;
    /* Warm-up allocation: most meetings never need more. */
    if (grow((void **)&d->turns, &d->turn_capacity, sizeof *d->turns, 256) != 0) return -1;
    if (grow((void **)&d->pending, &d->pending_capacity, sizeof *d->pending, 64) != 0) return -1;
    return 0;
}

void energy_diarizer_free(energy_diarizer_t *d) {
    free(d->turns);
    free(d->pending);
    d->turns = NULL;
    d->pending = NULL;
}

/* Queue the current state of turn record `index`; an id already queued is overwritten in place. */
static speakersync_status_t emit(energy_diarizer_t *d, size_t index) {
    const energy_turn_record_t *r = &d->turns[index];
    speakersync_turn_t t;
    t.turn_id = r->id;
    t.speaker = r->speaker;
    t.start_seconds = r->start_seconds;
    t.end_seconds = r->end_seconds;
    t.confidence = r->windows > 0 ? (float)(r->confidence_sum / r->windows) : 0.5f;
    t.flags = r->removed ? SPEAKERSYNC_TURN_REMOVED : 0u;
    for (size_t i = d->pending_head; i < d->pending_head + d->pending_count; i++) {
        if (d->pending[i].turn_id == t.turn_id) {
            d->pending[i] = t;
            return SPEAKERSYNC_OK;
        }
    }
    if (d->pending_head > 0 && d->pending_head + d->pending_count == d->pending_capacity) {
        memmove(d->pending, d->pending + d->pending_head, d->pending_count * sizeof *d->pending);
        d->pending_head = 0;
    }
    if (grow((void **)&d->pending, &d->pending_capacity, sizeof *d->pending,
             d->pending_head + d->pending_count + 1) != 0)
        return SPEAKERSYNC_ERR_OUT_OF_MEMORY;
    d->pending[d->pending_head + d->pending_count++] = t;
    return SPEAKERSYNC_OK;
}

static double distance(const double *x, const int *present, const energy_cluster_t *c) {
    double num = 0.0, den = 0.0;
    for (int k = 0; k < ENERGY_FEATURE_DIMS; k++) {
        if (!present[k] || c->observations[k] == 0) continue;
        double w = k == 0 ? PITCH_WEIGHT : 1.0, diff = x[k] - c->mean[k];
        num += w * diff * diff;
        den += w;
    }
    return den > 0 ? sqrt(num / den) : 0.0;
}

static int compare_floats(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Classify the window [start_frame, end_frame) and extend or open a turn. */
static speakersync_status_t close_window(energy_diarizer_t *d, uint64_t end_frame) {
    double x[ENERGY_FEATURE_DIMS];
    int present[ENERGY_FEATURE_DIMS];
    present[0] = d->window_voiced >= MIN_VOICED_FOR_PITCH;
    x[0] = 0.0;
    if (present[0]) {
        qsort(d->window_pitches, (size_t)d->window_voiced, sizeof(float), compare_floats);
        double median = d->window_pitches[d->window_voiced / 2];
        x[0] = 12.0 * log2(median / 100.0) / PITCH_SCALE_SEMITONES;
    }
    for (int b = 0; b < ENERGY_BANDS; b++) {
        present[1 + b] = 1;
        x[1 + b] = d->window_band_sum[b] / d->window_active / BAND_SCALE_DB;
    }

    int best = -1;
    double best_distance = INFINITY;
    for (int k = 0; k < d->cluster_count; k++) {
        double dist = distance(x, present, &d->clusters[k]);
        if (k == d->previous_speaker) dist *= CONTINUITY_FACTOR;
        if (dist < best_distance) {
            best_distance = dist;
            best = k;
        }
    }
    double confidence;
    if (best < 0 || (best_distance > d->options.threshold && d->cluster_count < d->options.max_speakers)) {
        best = d->cluster_count++;
        memset(&d->clusters[best], 0, sizeof d->clusters[best]);
        confidence = 0.5;
    } else {
        confidence = 1.0 - 0.5 * best_distance / d->options.threshold;
        if (confidence < 0.05) confidence = 0.05;
    }
    energy_cluster_t *c = &d->clusters[best];
    c->windows++;
    for (int k = 0; k < ENERGY_FEATURE_DIMS; k++) {
        if (!present[k]) continue;
        int n = ++c->observations[k];
        c->mean[k] += (x[k] - c->mean[k]) / (n < CENTROID_MEMORY ? n : CENTROID_MEMORY);
    }

    double start = d->window_start_frame * FRAME_SECONDS, end = end_frame * FRAME_SECONDS;
    speakersync_status_t status;
    if (d->open_turn >= 0 && d->turns[d->open_turn].speaker == best) {
        energy_turn_record_t *r = &d->turns[d->open_turn];
        r->end_seconds = end;
        r->confidence_sum += confidence;
        r->windows++;
        status = emit(d, (size_t)d->open_turn);
    } else {
        if (d->open_turn >= 0) start = d->turns[d->open_turn].end_seconds;
        if (grow((void **)&d->turns, &d->turn_capacity, sizeof *d->turns, d->turn_count + 1) != 0)
            return SPEAKERSYNC_ERR_OUT_OF_MEMORY;
        energy_turn_record_t *r = &d->turns[d->turn_count];
        r->id = d->next_turn_id++;
        r->speaker = best;
        r->segment = d->segment_number;
        r->start_seconds = start;
        r->end_seconds = end;
        r->confidence_sum = confidence;
        r->windows = 1;
        r->removed = 0;
        d->open_turn = (long)d->turn_count++;
        status = emit(d, (size_t)d->open_turn);
    }
    d->previous_speaker = best;
    d->window_start_frame = end_frame;
    d->window_active = 0;
    d->window_voiced = 0;
    memset(d->window_band_sum, 0, sizeof d->window_band_sum);
    return status;
}

static speakersync_status_t end_segment(energy_diarizer_t *d) {
    uint64_t end_frame = d->last_active_frame + 1;
    speakersync_status_t status = SPEAKERSYNC_OK;
    if (d->window_active >= MIN_WINDOW_ACTIVE) {
        status = close_window(d, end_frame);
    } else if (d->open_turn >= 0) {
        d->turns[d->open_turn].end_seconds = end_frame * FRAME_SECONDS;
        status = emit(d, (size_t)d->open_turn);
    } /* else: under 150 ms of activity in the whole segment: a click, not speech */
    d->in_speech = 0;
    d->open_turn = -1;
    d->previous_speaker = -1;
    return status;
}

static speakersync_status_t process_frame(energy_diarizer_t *d) {
    energy_frame_features_t f;
    energy_frame_analyze(&d->analyzer, d->frame, &f);
    uint64_t frame = d->frame_index++;
    float e = f.log_energy_db;

    if (!d->noise_floor_ready) {
        d->noise_floor_db = e;
        d->noise_floor_ready = 1;
    }
    int active = e > d->noise_floor_db + VAD_ON_DB && e > VAD_ABSOLUTE_MIN_DB;
    if (e < d->noise_floor_db) {
        d->noise_floor_db += 0.3f * (e - d->noise_floor_db);
    } else {
        float step = (d->in_speech ? 0.0005f : 0.02f) * (e - d->noise_floor_db);
        float cap = d->in_speech ? 0.005f : 0.1f;
        d->noise_floor_db += step < cap ? step : cap;
    }

    if (!d->in_speech) {
        if (!active) return SPEAKERSYNC_OK;
        d->in_speech = 1;
        d->segment_number++;
        d->segment_start_frame = frame;
        d->window_start_frame = frame;
        d->window_active = 0;
        d->window_voiced = 0;
        memset(d->window_band_sum, 0, sizeof d->window_band_sum);
        d->previous_speaker = -1;
        d->open_turn = -1;
    }
    if (active) {
        d->last_active_frame = frame;
        for (int b = 0; b < ENERGY_BANDS; b++) d->window_band_sum[b] += f.band_relative_db[b];
        if (f.pitch_hz > 0) d->window_pitches[d->window_voiced++] = f.pitch_hz;
        if (++d->window_active >= ENERGY_WINDOW_ACTIVE_FRAMES) return close_window(d, frame + 1);
    } else if (frame - d->last_active_frame >= HANGOVER_FRAMES) {
        return end_segment(d);
    }
    return SPEAKERSYNC_OK;
}

speakersync_status_t energy_diarizer_push(energy_diarizer_t *d, const float *samples, size_t count) {
    while (count > 0) {
        size_t take = ENERGY_FRAME_SAMPLES - d->frame_fill;
        if (take > count) take = count;
        memcpy(d->frame + d->frame_fill, samples, take * sizeof(float));
        d->frame_fill += take;
        samples += take;
        count -= take;
        if (d->frame_fill == ENERGY_FRAME_SAMPLES) {
            d->frame_fill = 0;
            speakersync_status_t status = process_frame(d);
            if (status != SPEAKERSYNC_OK) return status;
        }
    }
    return SPEAKERSYNC_OK;
}

/* Fold speakers seen in a single window into their nearest neighbour (when close enough), then merge the
 * turns of one segment that now touch and share a speaker: the later one is removed. */
static speakersync_status_t revise(energy_diarizer_t *d) {
    int target[ENERGY_MAX_SPEAKERS_LIMIT];
    int changed = 0;
    for (int k = 0; k < d->cluster_count; k++) {
        target[k] = k;
        if (d->clusters[k].windows != 1) continue;
        double x[ENERGY_FEATURE_DIMS];
        int present[ENERGY_FEATURE_DIMS];
        for (int i = 0; i < ENERGY_FEATURE_DIMS; i++) {
            x[i] = d->clusters[k].mean[i];
            present[i] = d->clusters[k].observations[i] > 0;
        }
        double best_distance = 2.0 * d->options.threshold;
        for (int j = 0; j < d->cluster_count; j++) {
            if (j == k || d->clusters[j].windows < 2) continue;
            double dist = distance(x, present, &d->clusters[j]);
            if (dist < best_distance) {
                best_distance = dist;
                target[k] = j;
            }
        }
        changed |= target[k] != k;
    }
    if (!changed) return SPEAKERSYNC_OK;
    long previous = -1;
    for (size_t i = 0; i < d->turn_count; i++) {
        energy_turn_record_t *r = &d->turns[i];
        if (r->removed) continue;
        int speaker = target[r->speaker];
        speakersync_status_t status = SPEAKERSYNC_OK;
        energy_turn_record_t *p = previous >= 0 ? &d->turns[previous] : NULL;
        if (p && p->segment == r->segment && p->speaker == speaker && fabs(p->end_seconds - r->start_seconds) < 1e-9) {
            p->end_seconds = r->end_seconds;
            p->confidence_sum += r->confidence_sum;
            p->windows += r->windows;
            r->removed = 1;
            if ((status = emit(d, (size_t)previous)) == SPEAKERSYNC_OK) status = emit(d, i);
            if (status != SPEAKERSYNC_OK) return status;
            continue;
        }
        if (speaker != r->speaker) {
            r->speaker = speaker;
            if ((status = emit(d, i)) != SPEAKERSYNC_OK) return status;
        }
        previous = (long)i;
    }
    return SPEAKERSYNC_OK;
}

speakersync_status_t energy_diarizer_finalize(energy_diarizer_t *d) {
    speakersync_status_t status = SPEAKERSYNC_OK;
    d->finalized = 1;
    if (d->in_speech) status = end_segment(d);
    if (status == SPEAKERSYNC_OK) status = revise(d);
    return status;
}

size_t energy_diarizer_pull(energy_diarizer_t *d, speakersync_turn_t *out, size_t capacity) {
    size_t n = d->pending_count < capacity ? d->pending_count : capacity;
    if (n > 0) memcpy(out, d->pending + d->pending_head, n * sizeof *out);
    d->pending_head += n;
    d->pending_count -= n;
    if (d->pending_count == 0) d->pending_head = 0;
    return n;
}
