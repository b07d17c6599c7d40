/* See onnx_runtime_shim.h. The only file that knows onnxruntime's C API table. */
#include "onnx_runtime_shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtValue OrtValue;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;

/* OrtApiBase: { const OrtApi *(*GetApi)(uint32_t version); const char *(*GetVersionString)(void); } */
typedef struct {
    const void *(*get_api)(uint32_t version);
    const char *(*get_version_string)(void);
} ort_api_base;

/* Slot numbers in OrtApi version 1 (onnxruntime_c_api.h, "End of Version 1 - DO NOT MODIFY ABOVE"). */
enum {
    SLOT_GET_ERROR_MESSAGE = 2,
    SLOT_CREATE_ENV = 3,
    SLOT_CREATE_SESSION = 7,
    SLOT_RUN = 9,
    SLOT_CREATE_SESSION_OPTIONS = 10,
    SLOT_SET_SESSION_EXECUTION_MODE = 13,
    SLOT_SET_GRAPH_OPTIMIZATION_LEVEL = 23,
    SLOT_SET_INTRA_OP_THREADS = 24,
    SLOT_SET_INTER_OP_THREADS = 25,
    SLOT_CREATE_TENSOR_WITH_DATA = 49,
    SLOT_GET_TENSOR_MUTABLE_DATA = 51,
    SLOT_GET_DIMENSIONS_COUNT = 61,
    SLOT_GET_DIMENSIONS = 62,
    SLOT_GET_TENSOR_TYPE_AND_SHAPE = 65,
    SLOT_CREATE_CPU_MEMORY_INFO = 69,
    SLOT_RELEASE_ENV = 92,
    SLOT_RELEASE_STATUS = 93,
    SLOT_RELEASE_MEMORY_INFO = 94,
    SLOT_RELEASE_SESSION = 95,
    SLOT_RELEASE_VALUE = 96,
    SLOT_RELEASE_TENSOR_TYPE_AND_SHAPE_INFO = 99,
    SLOT_RELEASE_SESSION_OPTIONS = 100,
};

typedef const char *(*get_error_message_fn)(const OrtStatus *);
typedef OrtStatus *(*create_env_fn)(int logging_level, const char *log_id, OrtEnv **out);
typedef OrtStatus *(*create_session_fn)(const OrtEnv *, const char *path, const OrtSessionOptions *, OrtSession **out);
typedef OrtStatus *(*run_fn)(OrtSession *, const void *run_options, const char *const *input_names, const OrtValue *const *inputs,
                             size_t input_count, const char *const *output_names, size_t output_count, OrtValue **outputs);
typedef OrtStatus *(*create_session_options_fn)(OrtSessionOptions **out);
typedef OrtStatus *(*set_int_option_fn)(OrtSessionOptions *, int value);
typedef OrtStatus *(*create_tensor_with_data_fn)(const OrtMemoryInfo *, void *data, size_t data_bytes, const int64_t *shape,
                                                 size_t rank, int element_type, OrtValue **out);
typedef OrtStatus *(*get_tensor_mutable_data_fn)(OrtValue *, void **out);
typedef OrtStatus *(*get_dimensions_count_fn)(const OrtTensorTypeAndShapeInfo *, size_t *out);
typedef OrtStatus *(*get_dimensions_fn)(const OrtTensorTypeAndShapeInfo *, int64_t *values, size_t count);
typedef OrtStatus *(*get_tensor_type_and_shape_fn)(const OrtValue *, OrtTensorTypeAndShapeInfo **out);
typedef OrtStatus *(*create_cpu_memory_info_fn)(int allocator_type, int mem_type, OrtMemoryInfo **out);
typedef void (*release_fn)(void *);

enum { ORT_LOGGING_LEVEL_ERROR = 3, ORT_SEQUENTIAL = 0, ORT_ENABLE_ALL = 99, ORT_ARENA_ALLOCATOR = 1, ORT_MEM_TYPE_DEFAULT = 0,
       ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT = 1 };

/* The process-wide runtime: the library, its API table and one environment (onnxruntime allows one). */
static pthread_mutex_t runtime_lock = PTHREAD_MUTEX_INITIALIZER;
static void *const *api_slots; /* OrtApi as an array of function pointers */
static OrtEnv *environment;
static OrtMemoryInfo *cpu_memory;
static char runtime_error[512];

#define SLOT(type, index) ((type)(api_slots[(index)]))

static void set_error(char *error, size_t error_len, const char *message) {
    if (error && error_len > 0) snprintf(error, error_len, "%s", message);
}

/* Copies a failed status's message into error and frees it; returns 1 when status was a failure. */
static int failed(OrtStatus *status, char *error, size_t error_len, const char *what) {
    if (!status) return 0;
    if (error && error_len > 0)
        snprintf(error, error_len, "%s: %s", what, SLOT(get_error_message_fn, SLOT_GET_ERROR_MESSAGE)(status));
    SLOT(release_fn, SLOT_RELEASE_STATUS)(status);
    return 1;
}

static int open_runtime(const char *library_path, char *error, size_t error_len) {
    pthread_mutex_lock(&runtime_lock);
    if (api_slots) { pthread_mutex_unlock(&runtime_lock); return 1; }
    if (runtime_error[0]) { set_error(error, error_len, runtime_error); pthread_mutex_unlock(&runtime_lock); return 0; }
    /* Never closed: onnxruntime keeps global state (its environment) for the process's lifetime. */
    void *library = dlopen(library_path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(runtime_error, sizeof runtime_error, "cannot open %s: %s", library_path, dlerror());
        goto fail;
    }
    const ort_api_base *(*get_api_base)(void) = (const ort_api_base *(*)(void))dlsym(library, "OrtGetApiBase");
    const ort_api_base *base = get_api_base ? get_api_base() : NULL;
    const void *api = base ? base->get_api(1) : NULL;
    if (!api) {
        snprintf(runtime_error, sizeof runtime_error, "%s has no onnxruntime C API version 1", library_path);
        goto fail;
    }
    api_slots = (void *const *)api;
    OrtStatus *status = SLOT(create_env_fn, SLOT_CREATE_ENV)(ORT_LOGGING_LEVEL_ERROR, "speakersync", &environment);
    if (!status) status = SLOT(create_cpu_memory_info_fn, SLOT_CREATE_CPU_MEMORY_INFO)(ORT_ARENA_ALLOCATOR, ORT_MEM_TYPE_DEFAULT, &cpu_memory);
    if (status) {
        failed(status, runtime_error, sizeof runtime_error, "onnxruntime environment");
        api_slots = NULL;
        goto fail;
    }
    pthread_mutex_unlock(&runtime_lock);
    return 1;
fail:
    set_error(error, error_len, runtime_error);
    pthread_mutex_unlock(&runtime_lock);
    return 0;
}

struct ss_ort_model {
    OrtSession *session;
};

ss_ort_model *ss_ort_model_open(const char *library_path, const char *model_path, int threads, char *error, size_t error_len) {
    if (!open_runtime(library_path, error, error_len)) return NULL;
    OrtSessionOptions *options = NULL;
    if (failed(SLOT(create_session_options_fn, SLOT_CREATE_SESSION_OPTIONS)(&options), error, error_len, "session options")) return NULL;
    OrtSession *session = NULL;
    int ok = !failed(SLOT(set_int_option_fn, SLOT_SET_INTRA_OP_THREADS)(options, threads < 1 ? 1 : threads), error, error_len, "intra-op threads")
        && !failed(SLOT(set_int_option_fn, SLOT_SET_INTER_OP_THREADS)(options, 1), error, error_len, "inter-op threads")
        && !failed(SLOT(set_int_option_fn, SLOT_SET_SESSION_EXECUTION_MODE)(options, ORT_SEQUENTIAL), error, error_len, "execution mode")
        && !failed(SLOT(set_int_option_fn, SLOT_SET_GRAPH_OPTIMIZATION_LEVEL)(options, ORT_ENABLE_ALL), error, error_len, "optimisation level")
        && !failed(SLOT(create_session_fn, SLOT_CREATE_SESSION)(environment, model_path, options, &session), error, error_len, model_path);
    SLOT(release_fn, SLOT_RELEASE_SESSION_OPTIONS)(options);
    if (!ok) return NULL;
    ss_ort_model *model = calloc(1, sizeof *model);
    if (!model) {
        SLOT(release_fn, SLOT_RELEASE_SESSION)(session);
        set_error(error, error_len, "out of memory");
        return NULL;
    }
    model->session = session;
    return model;
}

void ss_ort_model_close(ss_ort_model *model) {
    if (!model) return;
    SLOT(release_fn, SLOT_RELEASE_SESSION)(model->session);
    free(model);
}

int64_t ss_ort_model_run(ss_ort_model *model, const char *input_name, const float *input, const int64_t *shape, size_t rank,
                         const char *output_name, float *output, size_t output_capacity, int64_t *output_shape,
                         size_t *output_rank, char *error, size_t error_len) {
    size_t count = 1;
    for (size_t i = 0; i < rank; i++) {
        if (shape[i] <= 0) { set_error(error, error_len, "input shape has an empty dimension"); return -1; }
        count *= (size_t)shape[i];
    }
    OrtValue *tensor = NULL, *result = NULL;
    OrtTensorTypeAndShapeInfo *info = NULL;
    int64_t written = -1;
    /* onnxruntime does not write to an input tensor; its API takes a non-const pointer. */
    if (failed(SLOT(create_tensor_with_data_fn, SLOT_CREATE_TENSOR_WITH_DATA)(cpu_memory, (void *)input, count * sizeof(float), shape, rank,
                                                                              ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &tensor),
               error, error_len, "input tensor"))
        return -1;
    const OrtValue *inputs[1] = {tensor};
    const char *input_names[1] = {input_name};
    const char *output_names[1] = {output_name};
    if (failed(SLOT(run_fn, SLOT_RUN)(model->session, NULL, input_names, inputs, 1, output_names, 1, &result), error, error_len, "run"))
        goto done;
    size_t dimensions = 0;
    if (failed(SLOT(get_tensor_type_and_shape_fn, SLOT_GET_TENSOR_TYPE_AND_SHAPE)(result, &info), error, error_len, "output shape")
        || failed(SLOT(get_dimensions_count_fn, SLOT_GET_DIMENSIONS_COUNT)(info, &dimensions), error, error_len, "output rank"))
        goto done;
    if (dimensions > *output_rank) { set_error(error, error_len, "output rank exceeds the caller's capacity"); goto done; }
    if (failed(SLOT(get_dimensions_fn, SLOT_GET_DIMENSIONS)(info, output_shape, dimensions), error, error_len, "output dimensions")) goto done;
    *output_rank = dimensions;
    size_t output_count = 1;
    for (size_t i = 0; i < dimensions; i++) output_count *= (size_t)(output_shape[i] < 0 ? 0 : output_shape[i]);
    if (output_count > output_capacity) { set_error(error, error_len, "output larger than the caller's buffer"); goto done; }
    void *data = NULL;
    if (failed(SLOT(get_tensor_mutable_data_fn, SLOT_GET_TENSOR_MUTABLE_DATA)(result, &data), error, error_len, "output data")) goto done;
    memcpy(output, data, output_count * sizeof(float));
    written = (int64_t)output_count;
done:
    if (info) SLOT(release_fn, SLOT_RELEASE_TENSOR_TYPE_AND_SHAPE_INFO)(info);
    if (result) SLOT(release_fn, SLOT_RELEASE_VALUE)(result);
    SLOT(release_fn, SLOT_RELEASE_VALUE)(tensor);
    return written;
}

int ss_ort_model_run_many(ss_ort_model *model, const ss_ort_input *inputs, size_t input_count, ss_ort_output *outputs,
                          size_t output_count, char *error, size_t error_len) {
    enum { MAX_TENSORS = 8 };
    if (input_count > MAX_TENSORS || output_count > MAX_TENSORS) { set_error(error, error_len, "too many inputs or outputs"); return -1; }
    OrtValue *tensors[MAX_TENSORS] = {0}, *results[MAX_TENSORS] = {0};
    const char *input_names[MAX_TENSORS], *output_names[MAX_TENSORS];
    int status = -1;
    for (size_t index = 0; index < input_count; index++) {
        const ss_ort_input *input = &inputs[index];
        size_t element_size = input->element_type == SS_ORT_INT64 ? sizeof(int64_t) : sizeof(float);
        if (input->element_type != SS_ORT_INT64 && input->element_type != SS_ORT_FLOAT) { set_error(error, error_len, "unknown element type"); goto done; }
        size_t count = 1;
        for (size_t i = 0; i < input->rank; i++) {
            if (input->shape[i] <= 0) { set_error(error, error_len, "input shape has an empty dimension"); goto done; }
            count *= (size_t)input->shape[i];
        }
        /* onnxruntime does not write to an input tensor; its API takes a non-const pointer. */
        if (failed(SLOT(create_tensor_with_data_fn, SLOT_CREATE_TENSOR_WITH_DATA)(cpu_memory, (void *)input->data, count * element_size,
                                                                                  input->shape, input->rank, input->element_type, &tensors[index]),
                   error, error_len, input->name))
            goto done;
        input_names[index] = input->name;
    }
    for (size_t index = 0; index < output_count; index++) output_names[index] = outputs[index].name;
    if (failed(SLOT(run_fn, SLOT_RUN)(model->session, NULL, input_names, (const OrtValue *const *)tensors, input_count, output_names,
                                      output_count, results),
               error, error_len, "run"))
        goto done;
    for (size_t index = 0; index < output_count; index++) {
        OrtTensorTypeAndShapeInfo *info = NULL;
        size_t dimensions = 0;
        int64_t shape[8];
        if (failed(SLOT(get_tensor_type_and_shape_fn, SLOT_GET_TENSOR_TYPE_AND_SHAPE)(results[index], &info), error, error_len, "output shape"))
            goto done;
        int ok = !failed(SLOT(get_dimensions_count_fn, SLOT_GET_DIMENSIONS_COUNT)(info, &dimensions), error, error_len, "output rank")
            && (dimensions <= 8 || (set_error(error, error_len, "output rank over 8"), 0))
            && !failed(SLOT(get_dimensions_fn, SLOT_GET_DIMENSIONS)(info, shape, dimensions), error, error_len, "output dimensions");
        SLOT(release_fn, SLOT_RELEASE_TENSOR_TYPE_AND_SHAPE_INFO)(info);
        if (!ok) goto done;
        size_t count = 1;
        for (size_t i = 0; i < dimensions; i++) count *= (size_t)(shape[i] < 0 ? 0 : shape[i]);
        if (count > outputs[index].capacity) { set_error(error, error_len, "output larger than the caller's buffer"); goto done; }
        void *data = NULL;
        if (failed(SLOT(get_tensor_mutable_data_fn, SLOT_GET_TENSOR_MUTABLE_DATA)(results[index], &data), error, error_len, "output data")) goto done;
        memcpy(outputs[index].data, data, count * sizeof(float));
        outputs[index].written = (int64_t)count;
    }
    status = 0;
done:
    for (size_t index = 0; index < MAX_TENSORS; index++) {
        if (results[index]) SLOT(release_fn, SLOT_RELEASE_VALUE)(results[index]);
        if (tensors[index]) SLOT(release_fn, SLOT_RELEASE_VALUE)(tensors[index]);
    }
    return status;
}
