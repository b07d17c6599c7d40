/* Per-frame acoustic features: 10 ms frames at 16 kHz -> log energy, band balance, pitch. */
#ifndef ENERGY_FRAME_H
#define ENERGY_FRAME_H

#include <stddef.h>

#include "energy_options.h" /* ENERGY_INTERNAL */

#define ENERGY_SAMPLE_RATE 16000
#define ENERGY_FRAME_SAMPLES 160 /* 10 ms */
#define ENERGY_BANDS 5
/* Pitch runs on a 4 kHz low-passed copy: enough for 60-400 Hz and 16x cheaper than 16 kHz. */
#define ENERGY_PITCH_RATE 4000
#define ENERGY_PITCH_HISTORY 256 /* ring size at 4 kHz (64 ms), a power of two */

typedef struct energy_biquad {
    float b0, b1, b2, a1, a2;
    float z1, z2;
} energy_biquad_t;

/** Filter state carried across frames. Plain data: one per instance, no heap. */
typedef struct energy_frame_analyzer {
    energy_biquad_t lowpass[2]; /* 4th-order low-pass before decimating to 4 kHz */
    energy_biquad_t bands[ENERGY_BANDS];
    float pitch_ring[ENERGY_PITCH_HISTORY];
    size_t pitch_written; /* total decimated samples written */
    int decimation_phase;
} energy_frame_analyzer_t;

typedef struct energy_frame_features {
    /** 10*log10(mean square), dBFS; about -100 for digital silence. */
    float log_energy_db;
    /** Each band's energy relative to the frame's total, in dB: loudness-independent spectral shape. */
    float band_relative_db[ENERGY_BANDS];
    /** Fundamental frequency in Hz, or 0 when the frame is not clearly voiced. */
    float pitch_hz;
} energy_frame_features_t;

ENERGY_INTERNAL void energy_frame_analyzer_init(energy_frame_analyzer_t *analyzer);

/** Analyse the next ENERGY_FRAME_SAMPLES samples. Allocation-free. */
ENERGY_INTERNAL void energy_frame_analyze(energy_frame_analyzer_t *analyzer, const float *frame, energy_frame_features_t *out);

#endif
