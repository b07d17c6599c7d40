#ifndef SPEAKERSYNC_RECURRENT_H
#define SPEAKERSYNC_RECURRENT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One LSTM time step's recurrent product, accumulated: gates[b][j] += Σ_k hidden[b][k] · W[k][j]
/// for b < batch, j < width, k < hidden_size.
///
/// hidden:       batch × hidden_size, row-major (row b at hidden + b·hidden_size).
/// weights:      W as float32, hidden_size × width, row-major (W_hhᵀ: row k holds every gate's weight
///               for unit k). Used by the portable path.
/// weights_half: the same matrix as IEEE half-precision bit patterns. Used by the vector paths.
/// gates:        batch × width, row-major; read and written.
/// width must be a multiple of 64. Pure function of its arguments; safe from any thread. The caller
/// owns every buffer.
///
/// Why not sgemm: this product is a few rows by 1024 columns, repeated for every 10 ms frame, and it is
/// bound by reading W (1 MiB in float32) from cache, not by arithmetic. OpenBLAS also repacks its
/// operands on every such call. Here half-precision weight rows stream from cache (half the bytes),
/// are widened in registers, and the accumulators stay in vector registers (AVX-512, or AVX2 with F16C
/// and FMA, chosen at run time; plain float32 C otherwise).
void speakersync_recurrent_accumulate(const float *hidden, int batch, int hidden_size, const float *weights,
                                      const uint16_t *weights_half, int width, float *gates);

/// Which code path `speakersync_recurrent_accumulate` uses on this CPU: "avx512-f16", "avx2-f16" or
/// "generic-f32".
const char *speakersync_recurrent_kernel_name(void);

#ifdef __cplusplus
}
#endif

#endif
