/*
 * sherpa_onnx_vad.h — the few declarations of sherpa-onnx's C API that VoiceActivity calls.
 *
 * LAYOUT: mirrors sherpa-onnx 2.0.1 (`sherpa-onnx/c-api/c-api.h` in the PyPI wheel
 * sherpa_onnx_core-2.0.1-py3-none-manylinux2014_x86_64.whl). Written by hand, member for member, so
 * that the package builds without the vendored library or its header. Nothing here is linked: the
 * functions are looked up with dlsym at run time, and the Swift side refuses a library whose
 * SherpaOnnxGetVersionStr() is not "2.0.1", because a different release may have moved members
 * (2.0 for instance widened SherpaOnnxSpeechSegment.start from int32_t to int64_t).
 * sherpa_onnx_vad_layout.c checks the sizes and offsets below at compile time (x86_64 / aarch64 LP64).
 */
#ifndef SPEAKERSYNC_SHERPA_ONNX_VAD_H
#define SPEAKERSYNC_SHERPA_ONNX_VAD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The sherpa-onnx release whose layout this header mirrors. */
#define SPEAKERSYNC_SHERPA_ONNX_VERSION "2.0.1"

/* c-api.h: SherpaOnnxSileroVadModelConfig (size 32, align 8). */
typedef struct SherpaOnnxSileroVadModelConfig {
  const char *model;          /* offset 0 */
  float threshold;            /* offset 8 */
  float min_silence_duration; /* offset 12, seconds */
  float min_speech_duration;  /* offset 16, seconds */
  int32_t window_size;        /* offset 20, samples */
  float max_speech_duration;  /* offset 24, seconds; 4 bytes of tail padding follow */
} SherpaOnnxSileroVadModelConfig;

/* c-api.h: SherpaOnnxTenVadModelConfig. Unused, but a member of SherpaOnnxVadModelConfig: must be zeroed. */
typedef struct SherpaOnnxTenVadModelConfig {
  const char *model;
  float threshold;
  float min_silence_duration;
  float min_speech_duration;
  int32_t window_size;
  float max_speech_duration;
} SherpaOnnxTenVadModelConfig;

/* c-api.h: SherpaOnnxVadModelConfig (size 88, align 8). */
typedef struct SherpaOnnxVadModelConfig {
  SherpaOnnxSileroVadModelConfig silero_vad; /* offset 0 */
  int32_t sample_rate;                       /* offset 32 */
  int32_t num_threads;                       /* offset 36 */
  const char *provider;                      /* offset 40 */
  int32_t debug;                             /* offset 48; 4 bytes of padding follow */
  SherpaOnnxTenVadModelConfig ten_vad;       /* offset 56 */
} SherpaOnnxVadModelConfig;

/* c-api.h: SherpaOnnxSpeechSegment (size 24). Owned by the library; freed with SherpaOnnxDestroySpeechSegment. */
typedef struct SherpaOnnxSpeechSegment {
  int64_t start;  /* offset 0: first sample, counted from the detector's creation or last reset */
  float *samples; /* offset 8 */
  int32_t n;      /* offset 16: number of samples */
} SherpaOnnxSpeechSegment;

/* Opaque detector handle. */
typedef struct SherpaOnnxVoiceActivityDetector SherpaOnnxVoiceActivityDetector;

/* The functions VoiceActivity resolves with dlsym, as pointer types (names and signatures from c-api.h). */
typedef const char *(*SherpaOnnxGetVersionStrFn)(void);
typedef const SherpaOnnxVoiceActivityDetector *(*SherpaOnnxCreateVoiceActivityDetectorFn)(
    const SherpaOnnxVadModelConfig *config, float buffer_size_in_seconds);
typedef void (*SherpaOnnxDestroyVoiceActivityDetectorFn)(const SherpaOnnxVoiceActivityDetector *p);
typedef void (*SherpaOnnxVoiceActivityDetectorAcceptWaveformFn)(
    const SherpaOnnxVoiceActivityDetector *p, const float *samples, int32_t n);
typedef int32_t (*SherpaOnnxVoiceActivityDetectorEmptyFn)(const SherpaOnnxVoiceActivityDetector *p);
typedef int32_t (*SherpaOnnxVoiceActivityDetectorDetectedFn)(const SherpaOnnxVoiceActivityDetector *p);
typedef void (*SherpaOnnxVoiceActivityDetectorPopFn)(const SherpaOnnxVoiceActivityDetector *p);
typedef const SherpaOnnxSpeechSegment *(*SherpaOnnxVoiceActivityDetectorFrontFn)(
    const SherpaOnnxVoiceActivityDetector *p);
typedef void (*SherpaOnnxDestroySpeechSegmentFn)(const SherpaOnnxSpeechSegment *p);
typedef void (*SherpaOnnxVoiceActivityDetectorResetFn)(const SherpaOnnxVoiceActivityDetector *p);
typedef void (*SherpaOnnxVoiceActivityDetectorFlushFn)(const SherpaOnnxVoiceActivityDetector *p);

#ifdef __cplusplus
}
#endif

#endif /* SPEAKERSYNC_SHERPA_ONNX_VAD_H */
