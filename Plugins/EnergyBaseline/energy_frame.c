/* Frame analysis. Band energies come from RBJ band-pass biquads rather than an FFT: five filters per sample
 * are cheap and need no tables. Pitch is normalised autocorrelation on a 4 kHz low-passed copy, preferring
 * the shortest lag near the best peak to avoid sub-octave errors. */
#include "energy_frame.h"

#include <math.h>
#include <string.h>

#define PITCH_MIN_HZ 60.0f
#define PITCH_MAX_HZ 400.0f
#define PITCH_WINDOW 128        /* 32 ms at 4 kHz */
#define PITCH_VOICED_MIN_R 0.6f /* normalised autocorrelation needed to call a frame voiced */

static const float band_centres_hz[ENERGY_BANDS] = {250.0f, 500.0f, 1000.0f, 2000.0f, 4000.0f};

static void biquad_set(energy_biquad_t *f, double b0, double b1, double b2, double a0, double a1, double a2) {
    f->b0 = (float)(b0 / a0);
    f->b1 = (float)(b1 / a0);
    f->b2 = (float)(b2 / a0);
    f->a1 = (float)(a1 / a0);
    f->a2 = (float)(a2 / a0);
    f->z1 = f->z2 = 0.0f;
}

static void biquad_lowpass(energy_biquad_t *f, double cutoff_hz, double q) {
    double w0 = 2.0 * M_PI * cutoff_hz / ENERGY_SAMPLE_RATE, c = cos(w0), alpha = sin(w0) / (2.0 * q);
    biquad_set(f, (1.0 - c) / 2.0, 1.0 - c, (1.0 - c) / 2.0, 1.0 + alpha, -2.0 * c, 1.0 - alpha);
}

static void biquad_bandpass(energy_biquad_t *f, double centre_hz, double q) {
    double w0 = 2.0 * M_PI * centre_hz / ENERGY_SAMPLE_RATE, c = cos(w0), alpha = sin(w0) / (2.0 * q);
    biquad_set(f, alpha, 0.0, -alpha, 1.0 + alpha, -2.0 * c, 1.0 - alpha);
}

static inline float biquad_run(energy_biquad_t *f, float x) {
    float y = f->b0 * x + f->z1;
    f->z1 = f->b1 * x - f->a1 * y + f->z2;
    f->z2 = f->b2 * x - f->a2 * y;
    return y;
}

void energy_frame_analyzer_init(energy_frame_analyzer_t *a) {
    memset(a, 0, sizeof *a);
    biquad_lowpass(&a->lowpass[0], 900.0, 0.5412); /* Butterworth 4th order = Q 0.5412 and 1.3066 */
    biquad_lowpass(&a->lowpass[1], 900.0, 1.3066);
    for (int b = 0; b < ENERGY_BANDS; b++) biquad_bandpass(&a->bands[b], band_centres_hz[b], 1.2);
}

static float estimate_pitch(const energy_frame_analyzer_t *a) {
    const int min_lag = (int)(ENERGY_PITCH_RATE / PITCH_MAX_HZ);         /* 10 */
    const int max_lag = (int)(ENERGY_PITCH_RATE / PITCH_MIN_HZ + 0.5f); /* 67 */
    const int length = PITCH_WINDOW + max_lag + 1;
    float x[PITCH_WINDOW + 80];
    float r[80];
    if (a->pitch_written < (size_t)length) return 0.0f;
    size_t start = a->pitch_written - (size_t)length;
    float mean = 0.0f;
    for (int i = 0; i < length; i++) {
        x[i] = a->pitch_ring[(start + (size_t)i) & (ENERGY_PITCH_HISTORY - 1)];
        mean += x[i];
    }
    mean /= (float)length;
    for (int i = 0; i < length; i++) x[i] -= mean;

    float e0 = 0.0f;
    for (int i = 0; i < PITCH_WINDOW; i++) e0 += x[i] * x[i];
    if (e0 <= 1e-9f) return 0.0f;
    float best = -1.0f;
    for (int lag = min_lag - 1; lag <= max_lag + 1; lag++) {
        float num = 0.0f, el = 0.0f;
        for (int i = 0; i < PITCH_WINDOW; i++) {
            num += x[i] * x[i + lag];
            el += x[i + lag] * x[i + lag];
        }
        r[lag] = el > 1e-9f ? num / sqrtf(e0 * el) : 0.0f;
        if (lag >= min_lag && lag <= max_lag && r[lag] > best) best = r[lag];
    }
    if (best < PITCH_VOICED_MIN_R) return 0.0f;
    /* Shortest lag that is a local peak close to the best: multiples of the period score almost as well. */
    for (int lag = min_lag; lag <= max_lag; lag++) {
        if (r[lag] >= 0.9f * best && r[lag] >= r[lag - 1] && r[lag] >= r[lag + 1]) {
            float denom = r[lag - 1] - 2.0f * r[lag] + r[lag + 1];
            float shift = denom < -1e-6f ? 0.5f * (r[lag - 1] - r[lag + 1]) / denom : 0.0f;
            if (shift > 0.5f) shift = 0.5f;
            if (shift < -0.5f) shift = -0.5f;
            return (float)ENERGY_PITCH_RATE / ((float)lag + shift);
        }
    }
    return 0.0f;
}

void energy_frame_analyze(energy_frame_analyzer_t *a, const float *frame, energy_frame_features_t *out) {
    double total = 0.0;
    double band_energy[ENERGY_BANDS] = {0};
    for (int i = 0; i < ENERGY_FRAME_SAMPLES; i++) {
        float x = frame[i];
        total += (double)x * x;
        for (int b = 0; b < ENERGY_BANDS; b++) {
            float y = biquad_run(&a->bands[b], x);
            band_energy[b] += (double)y * y;
        }
        float low = biquad_run(&a->lowpass[1], biquad_run(&a->lowpass[0], x));
        if (++a->decimation_phase == ENERGY_SAMPLE_RATE / ENERGY_PITCH_RATE) {
            a->decimation_phase = 0;
            a->pitch_ring[a->pitch_written & (ENERGY_PITCH_HISTORY - 1)] = low;
            a->pitch_written++;
        }
    }
    total /= ENERGY_FRAME_SAMPLES;
    out->log_energy_db = (float)(10.0 * log10(total + 1e-10));
    for (int b = 0; b < ENERGY_BANDS; b++) {
        double e = band_energy[b] / ENERGY_FRAME_SAMPLES;
        out->band_relative_db[b] = (float)(10.0 * log10((e + 1e-12) / (total + 1e-10)));
    }
    out->pitch_hz = estimate_pitch(a);
}
