#include "speakersync_cell.h"

#include <stdint.h>
#include <string.h>

// e^x as plain float arithmetic the compiler vectorises: range reduction to [−ln2/2, ln2/2] by the
// 1.5·2²³ rounding trick, a degree-6 polynomial (relative error ≈ 2·10⁻⁷, below float32 rounding of the
// gate sums), 2ⁿ built in the exponent bits. Beyond ±87 float32 exp overflows or underflows; clamping
// keeps sigmoid at exactly 0 or 1.
__attribute__((always_inline)) static inline float cell_exp(float x) {
    float clamped = x < -87.0f ? -87.0f : (x > 87.0f ? 87.0f : x);
    float shifted = clamped * 1.4426950408889634f + 12582912.0f;
    float n = shifted - 12582912.0f;
    int32_t shifted_bits;
    memcpy(&shifted_bits, &shifted, sizeof shifted_bits);
    int32_t integer = shifted_bits - 0x4B400000;
    // ln 2 split into a part exact in float32 and the rest, so r keeps its low bits.
    float r = clamped - n * 0.693145751953125f - n * 1.4286067653301870e-6f;
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    uint32_t scale_bits = (uint32_t)(integer + 127) << 23;
    float scale;
    memcpy(&scale, &scale_bits, sizeof scale);
    return p * scale;
}

__attribute__((always_inline)) static inline float cell_sigmoid(float x) { return 1.0f / (1.0f + cell_exp(-x)); }
__attribute__((always_inline)) static inline float cell_tanh(float x) { return 2.0f / (1.0f + cell_exp(-2.0f * x)) - 1.0f; }

// One body, compiled once per instruction set: the loops are branch-free so each variant vectorises
// to its widest registers.
#define DEFINE_CELL_UPDATE(SUFFIX, ATTRIBUTES)                                                                  \
    ATTRIBUTES static void cell_update_##SUFFIX(float *gates, float *cell, float *hidden, int hs, int batch) { \
        for (int b = 0; b < batch; b++) {                                                                     \
            float *input = gates + (size_t)b * 4 * hs, *forget = input + hs, *candidate = input + 2 * hs;     \
            float *output = input + 3 * hs, *c = cell + (size_t)b * hs, *h = hidden + (size_t)b * hs;          \
            for (int unit = 0; unit < 2 * hs; unit++) input[unit] = cell_sigmoid(input[unit]);                \
            for (int unit = 0; unit < hs; unit++) candidate[unit] = cell_tanh(candidate[unit]);               \
            for (int unit = 0; unit < hs; unit++) output[unit] = cell_sigmoid(output[unit]);                  \
            for (int unit = 0; unit < hs; unit++) {                                                           \
                float value = forget[unit] * c[unit] + input[unit] * candidate[unit];                         \
                c[unit] = value;                                                                              \
                h[unit] = output[unit] * cell_tanh(value);                                                    \
            }                                                                                                 \
        }                                                                                                     \
    }

DEFINE_CELL_UPDATE(generic, )

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#define HAVE_X86_CELL_PATHS 1
// Each variant's target features are exactly those speakersync_recurrent_path_supported checks for its
// path (or fewer), so the dispatch below never runs an instruction the CPU lacks.
DEFINE_CELL_UPDATE(avx2, __attribute__((target("avx2,fma"))))
DEFINE_CELL_UPDATE(avx512, __attribute__((target("avx512f,fma"))))
#endif

void speakersync_lstm_cell_update(int path, float *gates, float *cell, float *hidden, int hidden_size, int batch) {
    switch (path) {
#ifdef HAVE_X86_CELL_PATHS
    case SPEAKERSYNC_RECURRENT_AVX2_F16: cell_update_avx2(gates, cell, hidden, hidden_size, batch); break;
    case SPEAKERSYNC_RECURRENT_AVX512_F16: cell_update_avx512(gates, cell, hidden, hidden_size, batch); break;
#endif
    default: cell_update_generic(gates, cell, hidden, hidden_size, batch); break;
    }
}
