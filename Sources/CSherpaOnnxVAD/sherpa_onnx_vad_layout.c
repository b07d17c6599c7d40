/* Compile-time checks that sherpa_onnx_vad.h has the member offsets of sherpa-onnx 2.0.1's c-api.h
 * (measured with offsetof against that header, see docs/vad.md). A wrong member here would silently
 * hand the library garbage, so the build fails instead. Defines nothing. */
#include <stddef.h>
#include "sherpa_onnx_vad.h"

#if defined(__LP64__)
_Static_assert(sizeof(SherpaOnnxSileroVadModelConfig) == 32, "SherpaOnnxSileroVadModelConfig size");
_Static_assert(offsetof(SherpaOnnxSileroVadModelConfig, model) == 0, "silero_vad.model");
_Static_assert(offsetof(SherpaOnnxSileroVadModelConfig, threshold) == 8, "silero_vad.threshold");
_Static_assert(offsetof(SherpaOnnxSileroVadModelConfig, min_silence_duration) == 12, "silero_vad.min_silence_duration");
_Static_assert(offsetof(SherpaOnnxSileroVadModelConfig, min_speech_duration) == 16, "silero_vad.min_speech_duration");
_Static_assert(offsetof(SherpaOnnxSileroVadModelConfig, window_size) == 20, "silero_vad.window_size");
_Static_assert(offsetof(SherpaOnnxSileroVadModelConfig, max_speech_duration) == 24, "silero_vad.max_speech_duration");
_Static_assert(sizeof(SherpaOnnxTenVadModelConfig) == 32, "SherpaOnnxTenVadModelConfig size");
_Static_assert(sizeof(SherpaOnnxVadModelConfig) == 88, "SherpaOnnxVadModelConfig size");
_Static_assert(offsetof(SherpaOnnxVadModelConfig, silero_vad) == 0, "silero_vad");
_Static_assert(offsetof(SherpaOnnxVadModelConfig, sample_rate) == 32, "sample_rate");
_Static_assert(offsetof(SherpaOnnxVadModelConfig, num_threads) == 36, "num_threads");
_Static_assert(offsetof(SherpaOnnxVadModelConfig, provider) == 40, "provider");
_Static_assert(offsetof(SherpaOnnxVadModelConfig, debug) == 48, "debug");
_Static_assert(offsetof(SherpaOnnxVadModelConfig, ten_vad) == 56, "ten_vad");
_Static_assert(sizeof(SherpaOnnxSpeechSegment) == 24, "SherpaOnnxSpeechSegment size");
_Static_assert(offsetof(SherpaOnnxSpeechSegment, start) == 0, "segment.start");
_Static_assert(offsetof(SherpaOnnxSpeechSegment, samples) == 8, "segment.samples");
_Static_assert(offsetof(SherpaOnnxSpeechSegment, n) == 16, "segment.n");
#endif
