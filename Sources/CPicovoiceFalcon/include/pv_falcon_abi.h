/*
 * pv_falcon_abi.h — the parts of Picovoice Falcon's C API (libpv_falcon, PyPI pvfalcon 2.0.1) that
 * PicovoiceFalcon calls, as function-pointer types for dlsym.
 *
 * Written by hand from the library's exported symbols (`nm -D libpv_falcon.so`) and the ctypes
 * signatures of the wheel's own binding (pvfalcon/_falcon.py), so the package builds without the
 * vendored library. Nothing is linked: the library is opened at run time by PicovoiceFalcon.
 * pv_falcon_abi_layout.c checks the one struct's layout.
 */
#ifndef SPEAKERSYNC_PV_FALCON_ABI_H
#define SPEAKERSYNC_PV_FALCON_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* pv_status_t: an int-sized enum; 0 is success (the values are listed in PicovoiceFalcon's FalconError). */
typedef int32_t pv_status_t;

/* Opaque engine object. */
typedef struct pv_falcon pv_falcon_t;

/* One diarized segment: seconds from the start of the audio given to pv_falcon_process, and a speaker tag
 * (non-negative, unique per speaker within one call; tags of two calls are unrelated). */
typedef struct {
    float start_sec;
    float end_sec;
    int32_t speaker_tag;
} pv_segment_t;

/* pv_falcon_init(access_key, model_path, device, &object): validates the AccessKey (online). device: "best",
 * "cpu", "cpu:N" (N threads), "gpu", "gpu:N". */
typedef pv_status_t (*pv_falcon_init_fn)(const char *access_key, const char *model_path, const char *device, pv_falcon_t **object);
typedef void (*pv_falcon_delete_fn)(pv_falcon_t *object);
/* Whole-recording diarization of 16-bit mono PCM at pv_sample_rate(); *segments is freed with
 * pv_falcon_segments_delete. */
typedef pv_status_t (*pv_falcon_process_fn)(pv_falcon_t *object, const int16_t *pcm, int32_t num_samples, int32_t *num_segments,
                                            pv_segment_t **segments);
typedef void (*pv_falcon_segments_delete_fn)(pv_segment_t *segments);
typedef const char *(*pv_falcon_version_fn)(void);
typedef int32_t (*pv_sample_rate_fn)(void);
typedef const char *(*pv_status_to_string_fn)(pv_status_t status);
/* The messages of the last failure on this thread, most general first; freed with pv_free_error_stack. */
typedef pv_status_t (*pv_get_error_stack_fn)(char ***message_stack, int32_t *message_stack_depth);
typedef void (*pv_free_error_stack_fn)(char **message_stack);

#ifdef __cplusplus
}
#endif

#endif
