#ifndef SPEAKERSYNC_RECURRENT_H
#define SPEAKERSYNC_RECURRENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The code paths of the recurrent product. Which ones a CPU can run is asked with
/// `speakersync_recurrent_path_supported`; `speakersync_recurrent_best_path` is the fastest of those.
///
/// Why not sgemm: this product is a few rows by 1024 columns, repeated for every 10 ms frame. OpenBLAS
/// repacks its operands on every such call; here the weights are packed once, in the format the path
/// multiplies fastest, and the accumulators stay in vector registers. (A bfloat16 path with vdpbf16ps
/// was measured and dropped: on this Xeon it was no faster for batches of 2 and slower for 4, and it
/// moved embeddings 30× further from the float64 reference; docs/embeddings.md.)
typedef enum {
    /// Plain C over float32 weights; any CPU.
    SPEAKERSYNC_RECURRENT_GENERIC_F32 = 0,
    /// AVX2 + F16C + FMA: half-precision weights widened in registers, 4 rows × 32 columns per tile.
    SPEAKERSYNC_RECURRENT_AVX2_F16 = 1,
    /// AVX-512F: half-precision weights widened in registers, 4 rows × 64 columns per tile.
    SPEAKERSYNC_RECURRENT_AVX512_F16 = 2,
} speakersync_recurrent_path;

/// Whether this CPU runs `path` (1) or not (0; also for an unknown value). Safe from any thread.
int speakersync_recurrent_path_supported(int path);

/// The fastest path this CPU supports, unless the environment variable SPEAKERSYNC_RECURRENT_PATH names
/// a supported path (by `speakersync_recurrent_path_name`), which is then used. Decided once per process;
/// safe from any thread.
int speakersync_recurrent_best_path(void);

/// A path's name ("generic-f32", "avx2-f16", "avx512-f16"); "unknown" otherwise. Static
/// storage: never freed.
const char *speakersync_recurrent_path_name(int path);

/// Bytes `speakersync_recurrent_pack` writes for a hidden_size × width matrix on `path`. Always a
/// multiple of 4.
size_t speakersync_recurrent_packed_size(int path, int hidden_size, int width);

/// Packs W (float32, hidden_size × width, row-major: row k holds every gate's weight for unit k, i.e.
/// W_hhᵀ) into `packed` (caller-allocated, `speakersync_recurrent_packed_size` bytes, 4-byte aligned) in
/// `path`'s format (the half-precision paths: tile-major, each tile's columns for every k contiguous, so
/// the kernel reads them sequentially). Done once per weight matrix; the packed copy is read-only afterwards and may be
/// shared by any number of threads.
void speakersync_recurrent_pack(int path, const float *weights, int hidden_size, int width, void *packed);

/// One LSTM time step's recurrent product, accumulated: gates[b][j] += Σ_k hidden[b][k] · W[k][j]
/// for b < batch, j < width, k < hidden_size.
///
/// path:   a supported path; `packed` must have been packed for it.
/// hidden: batch × hidden_size, row-major (row b at hidden + b·hidden_size).
/// gates:  batch × width, row-major; read and written.
/// width must be a multiple of 64. Pure function of its arguments;
/// safe from any thread. The caller owns every buffer.
void speakersync_recurrent_accumulate(int path, const float *hidden, int batch, int hidden_size, const void *packed,
                                      int width, float *gates);

#ifdef __cplusplus
}
#endif

#endif
