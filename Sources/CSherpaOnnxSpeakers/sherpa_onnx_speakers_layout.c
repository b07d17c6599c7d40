/* Compile-time checks that sherpa_onnx_speakers.h matches sherpa-onnx 2.0.1's layout on LP64 targets
 * (sizes and offsets read from the 2.0.1 c-api.h with the same compiler). */
#include <stddef.h>
#include "sherpa_onnx_speakers.h"

#if defined(__LP64__)
_Static_assert(sizeof(SherpaOnnxSpeakerEmbeddingExtractorConfig) == 24, "extractor config size");
_Static_assert(offsetof(SherpaOnnxSpeakerEmbeddingExtractorConfig, provider) == 16, "extractor provider");
_Static_assert(sizeof(SherpaOnnxOfflineSpeakerSegmentationPyannoteModelConfig) == 16, "pyannote config size");
_Static_assert(sizeof(SherpaOnnxOfflineSpeakerSegmentationModelConfig) == 32, "segmentation config size");
_Static_assert(offsetof(SherpaOnnxOfflineSpeakerSegmentationModelConfig, provider) == 24, "segmentation provider");
_Static_assert(sizeof(SherpaOnnxFastClusteringConfig) == 12, "clustering config size");
_Static_assert(sizeof(SherpaOnnxOfflineSpeakerDiarizationConfig) == 80, "diarization config size");
_Static_assert(offsetof(SherpaOnnxOfflineSpeakerDiarizationConfig, embedding) == 32, "embedding offset");
_Static_assert(offsetof(SherpaOnnxOfflineSpeakerDiarizationConfig, clustering) == 56, "clustering offset");
_Static_assert(offsetof(SherpaOnnxOfflineSpeakerDiarizationConfig, min_duration_on) == 68, "min_duration_on offset");
_Static_assert(offsetof(SherpaOnnxOfflineSpeakerDiarizationConfig, min_duration_off) == 72, "min_duration_off offset");
_Static_assert(sizeof(SherpaOnnxOfflineSpeakerDiarizationSegment) == 16, "segment size");
#endif
