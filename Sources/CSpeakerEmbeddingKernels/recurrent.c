#include "speakersync_recurrent.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

// MARK: - Weight formats

// IEEE half precision, round to nearest even (the compiler's _Float16 conversion).
static uint16_t to_half(float value) {
    _Float16 half = (_Float16)value;
    uint16_t bits;
    memcpy(&bits, &half, sizeof bits);
    return bits;
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>
#define HAVE_X86_PATHS 1

// The loop around a vector path's tile: batch rows in fours, gate columns in tiles of TW, each tile
// called with its row count as a literal so the inlined tile keeps its accumulators in registers.
#define DEFINE_DRIVER(SUFFIX, TARGET, TW)                                                                 \
    __attribute__((target(TARGET))) static void accumulate_##SUFFIX(                                     \
        const float *hidden, int batch, int hs, const void *packed, int width, float *gates) {           \
        const uint16_t *weights = (const uint16_t *)packed;                                               \
        for (int b0 = 0; b0 < batch; b0 += 4) {                                                           \
            const float *h = hidden + (size_t)b0 * hs;                                                    \
            float *g = gates + (size_t)b0 * width;                                                        \
            int rows = batch - b0 < 4 ? batch - b0 : 4;                                                   \
            for (int j0 = 0; j0 < width; j0 += TW) {                                                      \
                switch (rows) {                                                                           \
                case 1: tile_##SUFFIX(h, hs, weights, width, g, j0, 1); break;                            \
                case 2: tile_##SUFFIX(h, hs, weights, width, g, j0, 2); break;                            \
                case 3: tile_##SUFFIX(h, hs, weights, width, g, j0, 3); break;                            \
                default: tile_##SUFFIX(h, hs, weights, width, g, j0, 4); break;                           \
                }                                                                                         \
            }                                                                                             \
        }                                                                                                 \
    }

// NB rows (1..4, a compile-time constant after inlining) × 64 columns: 16 zmm accumulators. Per k, four
// loads of 16 half weights, widened once, used NB times.
__attribute__((target("avx512f,fma"), always_inline)) static inline void
tile_avx512(const float *h, int hs, const uint16_t *w, int width, float *g, int j0, const int NB) {
    __m512 acc[4][4];
    for (int b = 0; b < NB; b++)
        for (int c = 0; c < 4; c++) acc[b][c] = _mm512_loadu_ps(g + (size_t)b * width + j0 + 16 * c);
    for (int k = 0; k < hs; k++) {
        const uint16_t *row = w + (size_t)j0 * hs + (size_t)k * 64;
        __m512 w0 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row)));
        __m512 w1 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row + 16)));
        __m512 w2 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row + 32)));
        __m512 w3 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row + 48)));
        for (int b = 0; b < NB; b++) {
            __m512 x = _mm512_set1_ps(h[(size_t)b * hs + k]);
            acc[b][0] = _mm512_fmadd_ps(x, w0, acc[b][0]);
            acc[b][1] = _mm512_fmadd_ps(x, w1, acc[b][1]);
            acc[b][2] = _mm512_fmadd_ps(x, w2, acc[b][2]);
            acc[b][3] = _mm512_fmadd_ps(x, w3, acc[b][3]);
        }
    }
    for (int b = 0; b < NB; b++)
        for (int c = 0; c < 4; c++) _mm512_storeu_ps(g + (size_t)b * width + j0 + 16 * c, acc[b][c]);
}

DEFINE_DRIVER(avx512, "avx512f,fma", 64)

// NB rows × 32 columns: 16 ymm accumulators.
__attribute__((target("avx2,f16c,fma"), always_inline)) static inline void
tile_avx2(const float *h, int hs, const uint16_t *w, int width, float *g, int j0, const int NB) {
    __m256 acc[4][4];
    for (int b = 0; b < NB; b++)
        for (int c = 0; c < 4; c++) acc[b][c] = _mm256_loadu_ps(g + (size_t)b * width + j0 + 8 * c);
    for (int k = 0; k < hs; k++) {
        const uint16_t *row = w + (size_t)j0 * hs + (size_t)k * 32;
        __m256 w0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row)));
        __m256 w1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + 8)));
        __m256 w2 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + 16)));
        __m256 w3 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + 24)));
        for (int b = 0; b < NB; b++) {
            __m256 x = _mm256_set1_ps(h[(size_t)b * hs + k]);
            acc[b][0] = _mm256_fmadd_ps(x, w0, acc[b][0]);
            acc[b][1] = _mm256_fmadd_ps(x, w1, acc[b][1]);
            acc[b][2] = _mm256_fmadd_ps(x, w2, acc[b][2]);
            acc[b][3] = _mm256_fmadd_ps(x, w3, acc[b][3]);
        }
    }
    for (int b = 0; b < NB; b++)
        for (int c = 0; c < 4; c++) _mm256_storeu_ps(g + (size_t)b * width + j0 + 8 * c, acc[b][c]);
}

DEFINE_DRIVER(avx2, "avx2,f16c,fma", 32)
#endif

// Portable float32 path: one row at a time, columns in blocks the compiler can vectorise.
static void accumulate_generic(const float *hidden, int batch, int hs, const void *packed, int width, float *gates) {
    const float *weights = (const float *)packed;
    for (int b = 0; b < batch; b++) {
        const float *h = hidden + (size_t)b * hs;
        float *g = gates + (size_t)b * width;
        for (int k = 0; k < hs; k++) {
            const float x = h[k];
            const float *row = weights + (size_t)k * width;
            for (int j = 0; j < width; j++) g[j] += x * row[j];
        }
    }
}

// MARK: - Paths

int speakersync_recurrent_path_supported(int path) {
    switch (path) {
    case SPEAKERSYNC_RECURRENT_GENERIC_F32: return 1;
#ifdef HAVE_X86_PATHS
    case SPEAKERSYNC_RECURRENT_AVX2_F16:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    case SPEAKERSYNC_RECURRENT_AVX512_F16:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#endif
    default: return 0;
    }
}

// Decided once; if two threads race here first, both store the same value.
static int best_path = -1;

int speakersync_recurrent_best_path(void) {
    int path = __atomic_load_n(&best_path, __ATOMIC_ACQUIRE);
    if (path >= 0) return path;
    // An operator's override, like OpenBLAS's OPENBLAS_CORETYPE: to compare paths, or to rule one out.
    const char *forced = getenv("SPEAKERSYNC_RECURRENT_PATH");
    for (int candidate = SPEAKERSYNC_RECURRENT_GENERIC_F32; forced && candidate <= SPEAKERSYNC_RECURRENT_AVX512_F16; candidate++) {
        if (strcmp(forced, speakersync_recurrent_path_name(candidate)) == 0 && speakersync_recurrent_path_supported(candidate)) {
            path = candidate;
        }
    }
    static const int fastest_first[] = {SPEAKERSYNC_RECURRENT_AVX512_F16, SPEAKERSYNC_RECURRENT_AVX2_F16,
                                        SPEAKERSYNC_RECURRENT_GENERIC_F32};
    for (size_t index = 0; path < 0 && index < sizeof fastest_first / sizeof fastest_first[0]; index++) {
        if (speakersync_recurrent_path_supported(fastest_first[index])) path = fastest_first[index];
    }
    __atomic_store_n(&best_path, path, __ATOMIC_RELEASE);
    return path;
}

const char *speakersync_recurrent_path_name(int path) {
    switch (path) {
    case SPEAKERSYNC_RECURRENT_GENERIC_F32: return "generic-f32";
    case SPEAKERSYNC_RECURRENT_AVX2_F16: return "avx2-f16";
    case SPEAKERSYNC_RECURRENT_AVX512_F16: return "avx512-f16";
    default: return "unknown";
    }
}

size_t speakersync_recurrent_packed_size(int path, int hidden_size, int width) {
    size_t count = (size_t)hidden_size * (size_t)width;
    return path == SPEAKERSYNC_RECURRENT_GENERIC_F32 ? count * sizeof(float) : count * sizeof(uint16_t);
}

void speakersync_recurrent_pack(int path, const float *weights, int hidden_size, int width, void *packed) {
    size_t count = (size_t)hidden_size * (size_t)width;
    switch (path) {
    case SPEAKERSYNC_RECURRENT_AVX2_F16:
    case SPEAKERSYNC_RECURRENT_AVX512_F16: {
        // Tile-major: a tile's columns for every k lie back to back (hidden_size × tile halves), so the
        // kernel streams each tile's weights sequentially instead of one short piece per 2 KB row.
        const size_t tile = path == SPEAKERSYNC_RECURRENT_AVX512_F16 ? 64 : 32;
        uint16_t *half = (uint16_t *)packed;
        size_t index = 0;
        for (size_t j0 = 0; j0 < (size_t)width; j0 += tile)
            for (size_t k = 0; k < (size_t)hidden_size; k++)
                for (size_t c = 0; c < tile; c++) half[index++] = to_half(weights[k * (size_t)width + j0 + c]);
        break;
    }
    default: memcpy(packed, weights, count * sizeof(float)); break;
    }
}

void speakersync_recurrent_accumulate(int path, const float *hidden, int batch, int hidden_size, const void *packed,
                                      int width, float *gates) {
    switch (path) {
#ifdef HAVE_X86_PATHS
    case SPEAKERSYNC_RECURRENT_AVX2_F16: accumulate_avx2(hidden, batch, hidden_size, packed, width, gates); break;
    case SPEAKERSYNC_RECURRENT_AVX512_F16: accumulate_avx512(hidden, batch, hidden_size, packed, width, gates); break;
#endif
    default: accumulate_generic(hidden, batch, hidden_size, packed, width, gates); break;
    }
}
