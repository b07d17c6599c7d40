/*
 * sherpa_onnx_speakers.h — the declarations of sherpa-onnx's C API for speakers that SherpaOnnxSpeakers
 * calls: the speaker embedding extractor and the offline (overlap-aware) speaker diarization.
 *
 * LAYOUT: mirrors sherpa-onnx 2.0.1 (`sherpa-onnx/c-api/c-api.h` in the PyPI wheel
 * sherpa_onnx_core-2.0.1-py3-none-manylinux2014_x86_64.whl), written by hand member for member so that
 * the package builds without the vendored library or its header. Nothing is linked: the functions are
 * looked up with dlsym from the library VoiceActivity opened, which refuses any release but 2.0.1.
 * 2.0.1 added members the project's 1.x repository does not have (window_shift_ratio,
 * compute_confidence, the segment's confidence): sherpa_onnx_speakers_layout.c checks sizes and offsets.
 */
#ifndef SPEAKERSYNC_SHERPA_ONNX_SPEAKERS_H
#define SPEAKERSYNC_SHERPA_ONNX_SPEAKERS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque to us. */
typedef struct SherpaOnnxOnlineStream SherpaOnnxOnlineStream;
typedef struct SherpaOnnxSpeakerEmbeddingExtractor SherpaOnnxSpeakerEmbeddingExtractor;
typedef struct SherpaOnnxOfflineSpeakerDiarization SherpaOnnxOfflineSpeakerDiarization;
typedef struct SherpaOnnxOfflineSpeakerDiarizationResult SherpaOnnxOfflineSpeakerDiarizationResult;

/* c-api.h: SherpaOnnxSpeakerEmbeddingExtractorConfig (size 24). */
typedef struct SherpaOnnxSpeakerEmbeddingExtractorConfig {
  const char *model;   /* offset 0 */
  int32_t num_threads; /* offset 8 */
  int32_t debug;       /* offset 12 */
  const char *provider;/* offset 16, e.g. "cpu" */
} SherpaOnnxSpeakerEmbeddingExtractorConfig;

/* c-api.h: SherpaOnnxOfflineSpeakerSegmentationPyannoteModelConfig (size 16). */
typedef struct SherpaOnnxOfflineSpeakerSegmentationPyannoteModelConfig {
  const char *model;        /* offset 0 */
  float window_shift_ratio; /* offset 8: window step as a fraction of the window; 0 means 0.1 */
} SherpaOnnxOfflineSpeakerSegmentationPyannoteModelConfig;

/* c-api.h: SherpaOnnxOfflineSpeakerSegmentationModelConfig (size 32). */
typedef struct SherpaOnnxOfflineSpeakerSegmentationModelConfig {
  SherpaOnnxOfflineSpeakerSegmentationPyannoteModelConfig pyannote; /* offset 0 */
  int32_t num_threads;                                              /* offset 16 */
  int32_t debug;                                                    /* offset 20 */
  const char *provider;                                             /* offset 24 */
} SherpaOnnxOfflineSpeakerSegmentationModelConfig;

/* c-api.h: SherpaOnnxFastClusteringConfig (size 12). num_clusters > 0 wins over threshold, which is a
 * cosine DISTANCE (1 - cos): clusters stop merging at it, so a smaller value finds more speakers. 0 in
 * either means the library default (-1, 0.5). */
typedef struct SherpaOnnxFastClusteringConfig {
  int32_t num_clusters;       /* offset 0 */
  float threshold;            /* offset 4 */
  int32_t compute_confidence; /* offset 8 */
} SherpaOnnxFastClusteringConfig;

/* c-api.h: SherpaOnnxOfflineSpeakerDiarizationConfig (size 80). A zero duration means the default
 * (0.3 s on, 0.5 s off): to ask for none, pass a tiny positive value. */
typedef struct SherpaOnnxOfflineSpeakerDiarizationConfig {
  SherpaOnnxOfflineSpeakerSegmentationModelConfig segmentation; /* offset 0 */
  SherpaOnnxSpeakerEmbeddingExtractorConfig embedding;          /* offset 32 */
  SherpaOnnxFastClusteringConfig clustering;                    /* offset 56 */
  float min_duration_on;                                        /* offset 68, seconds */
  float min_duration_off;                                       /* offset 72, seconds */
} SherpaOnnxOfflineSpeakerDiarizationConfig;

/* c-api.h: SherpaOnnxOfflineSpeakerDiarizationSegment (size 16). Segments of different speakers may
 * overlap; speaker ids may have gaps; an end may pass the audio's end by a frame. */
typedef struct SherpaOnnxOfflineSpeakerDiarizationSegment {
  float start;      /* offset 0, seconds */
  float end;        /* offset 4 */
  int32_t speaker;  /* offset 8 */
  float confidence; /* offset 12: [-1, 1], or -2 when not computed */
} SherpaOnnxOfflineSpeakerDiarizationSegment;

/* Embedding extractor. */
typedef const SherpaOnnxSpeakerEmbeddingExtractor *(*SherpaOnnxCreateSpeakerEmbeddingExtractorFn)(
    const SherpaOnnxSpeakerEmbeddingExtractorConfig *config);
typedef void (*SherpaOnnxDestroySpeakerEmbeddingExtractorFn)(const SherpaOnnxSpeakerEmbeddingExtractor *p);
typedef int32_t (*SherpaOnnxSpeakerEmbeddingExtractorDimFn)(const SherpaOnnxSpeakerEmbeddingExtractor *p);
typedef const SherpaOnnxOnlineStream *(*SherpaOnnxSpeakerEmbeddingExtractorCreateStreamFn)(
    const SherpaOnnxSpeakerEmbeddingExtractor *p);
typedef int32_t (*SherpaOnnxSpeakerEmbeddingExtractorIsReadyFn)(const SherpaOnnxSpeakerEmbeddingExtractor *p,
                                                                const SherpaOnnxOnlineStream *s);
typedef const float *(*SherpaOnnxSpeakerEmbeddingExtractorComputeEmbeddingFn)(
    const SherpaOnnxSpeakerEmbeddingExtractor *p, const SherpaOnnxOnlineStream *s);
typedef void (*SherpaOnnxSpeakerEmbeddingExtractorDestroyEmbeddingFn)(const float *v);
typedef void (*SherpaOnnxOnlineStreamAcceptWaveformFn)(const SherpaOnnxOnlineStream *stream, int32_t sample_rate,
                                                       const float *samples, int32_t n);
typedef void (*SherpaOnnxOnlineStreamInputFinishedFn)(const SherpaOnnxOnlineStream *stream);
typedef void (*SherpaOnnxDestroyOnlineStreamFn)(const SherpaOnnxOnlineStream *stream);

/* Offline speaker diarization. */
typedef const SherpaOnnxOfflineSpeakerDiarization *(*SherpaOnnxCreateOfflineSpeakerDiarizationFn)(
    const SherpaOnnxOfflineSpeakerDiarizationConfig *config);
typedef void (*SherpaOnnxDestroyOfflineSpeakerDiarizationFn)(const SherpaOnnxOfflineSpeakerDiarization *sd);
typedef int32_t (*SherpaOnnxOfflineSpeakerDiarizationGetSampleRateFn)(const SherpaOnnxOfflineSpeakerDiarization *sd);
typedef void (*SherpaOnnxOfflineSpeakerDiarizationSetConfigFn)(const SherpaOnnxOfflineSpeakerDiarization *sd,
                                                               const SherpaOnnxOfflineSpeakerDiarizationConfig *config);
typedef const SherpaOnnxOfflineSpeakerDiarizationResult *(*SherpaOnnxOfflineSpeakerDiarizationProcessFn)(
    const SherpaOnnxOfflineSpeakerDiarization *sd, const float *samples, int32_t n);
typedef int32_t (*SherpaOnnxOfflineSpeakerDiarizationResultGetNumSegmentsFn)(
    const SherpaOnnxOfflineSpeakerDiarizationResult *r);
typedef const SherpaOnnxOfflineSpeakerDiarizationSegment *(*SherpaOnnxOfflineSpeakerDiarizationResultSortByStartTimeFn)(
    const SherpaOnnxOfflineSpeakerDiarizationResult *r);
typedef void (*SherpaOnnxOfflineSpeakerDiarizationDestroySegmentFn)(const SherpaOnnxOfflineSpeakerDiarizationSegment *s);
typedef void (*SherpaOnnxOfflineSpeakerDiarizationDestroyResultFn)(const SherpaOnnxOfflineSpeakerDiarizationResult *r);

#ifdef __cplusplus
}
#endif

#endif
