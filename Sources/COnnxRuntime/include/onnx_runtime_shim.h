/* A float-tensor model runner over onnxruntime's C API, for the pyannote segmentation model and the
 * silero VAD run in batches.
 *
 * onnxruntime is the library scripts/setup vendors with sherpa-onnx (vendor/sherpa-onnx/lib/libonnxruntime.so);
 * it is opened with dlopen at run time, never linked. Its C API is a table of function pointers
 * (OrtApi) whose first 102 members are frozen as "version 1"; this shim asks for version 1 and uses
 * only members of it, so any onnxruntime release serves. The table's slots are named in the .c file.
 *
 * Threads: one ss_ort_model may run on one thread at a time (the caller serialises); different
 * models may run concurrently. Every function writes a message into `error` (NUL-terminated,
 * truncated to error_len) when it fails. */
#ifndef SPEAKERSYNC_ONNX_RUNTIME_SHIM_H
#define SPEAKERSYNC_ONNX_RUNTIME_SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ss_ort_model ss_ort_model;

/* Opens onnxruntime at library_path (once per process; later calls reuse it) and loads the model at
 * model_path with `threads` intra-op threads (>= 1) and sequential execution. NULL on failure.
 * Free with ss_ort_model_close. */
ss_ort_model *ss_ort_model_open(const char *library_path, const char *model_path, int threads, char *error, size_t error_len);

/* Frees the model (NULL is allowed). */
void ss_ort_model_close(ss_ort_model *model);

/* Runs the model on one float32 input tensor (input_name, shape[rank]) and copies its float32 output
 * `output_name` into `output` (capacity output_capacity floats). The output's shape goes to
 * output_shape (capacity *output_rank dimensions; *output_rank is set to the actual rank).
 * Returns the number of floats written, or -1 on failure (including an output larger than capacity). */
int64_t ss_ort_model_run(ss_ort_model *model, const char *input_name, const float *input, const int64_t *shape, size_t rank,
                         const char *output_name, float *output, size_t output_capacity, int64_t *output_shape,
                         size_t *output_rank, char *error, size_t error_len);

/* One input of ss_ort_model_run_many: a tensor the caller owns for the duration of the call. */
typedef struct {
    const char *name;
    int element_type;        /* SS_ORT_FLOAT or SS_ORT_INT64 */
    const void *data;        /* product(shape) elements of element_type */
    const int64_t *shape;
    size_t rank;
} ss_ort_input;

/* One float32 output of ss_ort_model_run_many: copied into data (capacity floats); `written` is set to
 * the number of floats copied. */
typedef struct {
    const char *name;
    float *data;
    size_t capacity;
    int64_t written;
} ss_ort_output;

enum { SS_ORT_FLOAT = 1, SS_ORT_INT64 = 7 };

/* Runs the model on several inputs (float32 or int64) and copies several float32 outputs, for models
 * with state (silero VAD: audio, recurrent state and sample rate in; probability and next state out).
 * Returns 0, or -1 on failure (including an output larger than its capacity). */
int ss_ort_model_run_many(ss_ort_model *model, const ss_ort_input *inputs, size_t input_count, ss_ort_output *outputs,
                          size_t output_count, char *error, size_t error_len);

#ifdef __cplusplus
}
#endif

#endif
