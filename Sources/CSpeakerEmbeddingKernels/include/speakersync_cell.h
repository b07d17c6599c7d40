#ifndef SPEAKERSYNC_CELL_H
#define SPEAKERSYNC_CELL_H

#include "speakersync_recurrent.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The elementwise half of one LSTM time step, PyTorch's cell update, for `batch` rows at once.
///
/// Why in C: Swift code here is compiled for baseline x86-64 (SSE2), so its vectorised exp ran 4 lanes
/// wide; compiled per instruction set like the recurrent product, it runs 8 (AVX2) or 16 (AVX-512) wide.
///
/// path:   a `speakersync_recurrent_path` this CPU supports (the same one as the recurrent product);
///         it selects the instruction set only, every path computes the same function.
/// gates:  batch × 4·hidden_size, row-major; row b holds the pre-activations [i | f | g | o] and is
///         overwritten with the activations.
/// cell:   batch × hidden_size; c_{t−1} in, c_t out.
/// hidden: batch × hidden_size; receives h_t.
/// Pure function of its arguments; safe from any thread. The caller owns every buffer.
void speakersync_lstm_cell_update(int path, float *gates, float *cell, float *hidden, int hidden_size, int batch);

#ifdef __cplusplus
}
#endif

#endif
