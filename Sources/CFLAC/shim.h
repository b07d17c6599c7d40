#include <FLAC/stream_decoder.h>
#include <FLAC/stream_encoder.h>
#include <stdlib.h>
#include <string.h>

// libFLAC's stream callbacks, in C: they only move bytes and samples between libFLAC and memory
// the Swift caller owns (passed as client_data), which is simpler and safer written here than as
// Swift closures converted to C function pointers.

/// Encoder output: a growable byte buffer. `failed` is set when memory ran out.
typedef struct {
    unsigned char *bytes;
    size_t count;
    size_t capacity;
    int failed;
} cflac_output;

static inline FLAC__StreamEncoderWriteStatus cflac_write(const FLAC__StreamEncoder *encoder, const FLAC__byte buffer[],
                                                         size_t bytes, uint32_t samples, uint32_t current_frame, void *client_data) {
    (void)encoder; (void)samples; (void)current_frame;
    cflac_output *out = (cflac_output *)client_data;
    if (out->count + bytes > out->capacity) {
        size_t capacity = out->capacity ? out->capacity : 4096;
        while (capacity < out->count + bytes) capacity *= 2;
        unsigned char *grown = (unsigned char *)realloc(out->bytes, capacity);
        if (!grown) { out->failed = 1; return FLAC__STREAM_ENCODER_WRITE_STATUS_FATAL_ERROR; }
        out->bytes = grown;
        out->capacity = capacity;
    }
    memcpy(out->bytes + out->count, buffer, bytes);
    out->count += bytes;
    return FLAC__STREAM_ENCODER_WRITE_STATUS_OK;
}

static inline FLAC__StreamEncoderInitStatus cflac_encoder_init(FLAC__StreamEncoder *encoder, cflac_output *out) {
    return FLAC__stream_encoder_init_stream(encoder, cflac_write, NULL, NULL, NULL, out);
}

/// Decoder input (a whole stream in memory) and output (mono 16-bit samples). `problem`: 0 fine,
/// 1 not mono 16-bit, 2 a decoding error libFLAC reported, 3 out of memory.
typedef struct {
    const unsigned char *bytes;
    size_t count;
    size_t offset;
    short *samples;
    size_t sample_count;
    size_t sample_capacity;
    uint32_t sample_rate;
    /// From STREAMINFO: the stream's length in samples (0: unknown) and whether it was seen.
    unsigned long long total_samples;
    int saw_streaminfo;
    int problem;
} cflac_input;

static inline FLAC__StreamDecoderReadStatus cflac_read(const FLAC__StreamDecoder *decoder, FLAC__byte buffer[], size_t *bytes, void *client_data) {
    (void)decoder;
    cflac_input *in = (cflac_input *)client_data;
    if (in->offset >= in->count) { *bytes = 0; return FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM; }
    size_t n = in->count - in->offset;
    if (n > *bytes) n = *bytes;
    memcpy(buffer, in->bytes + in->offset, n);
    in->offset += n;
    *bytes = n;
    return FLAC__STREAM_DECODER_READ_STATUS_CONTINUE;
}

static inline FLAC__StreamDecoderWriteStatus cflac_decoded(const FLAC__StreamDecoder *decoder, const FLAC__Frame *frame,
                                                           const FLAC__int32 *const buffer[], void *client_data) {
    (void)decoder;
    cflac_input *in = (cflac_input *)client_data;
    if (frame->header.channels != 1 || frame->header.bits_per_sample != 16) {
        in->problem = 1;
        return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT;
    }
    in->sample_rate = frame->header.sample_rate;
    size_t n = frame->header.blocksize;
    if (in->sample_count + n > in->sample_capacity) {
        size_t capacity = in->sample_capacity ? in->sample_capacity : 16384;
        while (capacity < in->sample_count + n) capacity *= 2;
        short *grown = (short *)realloc(in->samples, capacity * sizeof(short));
        if (!grown) { in->problem = 3; return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT; }
        in->samples = grown;
        in->sample_capacity = capacity;
    }
    for (size_t i = 0; i < n; i++) in->samples[in->sample_count + i] = (short)buffer[0][i];
    in->sample_count += n;
    return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE;
}

static inline void cflac_metadata(const FLAC__StreamDecoder *decoder, const FLAC__StreamMetadata *metadata, void *client_data) {
    (void)decoder;
    cflac_input *in = (cflac_input *)client_data;
    if (metadata->type != FLAC__METADATA_TYPE_STREAMINFO) return;
    in->saw_streaminfo = 1;
    in->sample_rate = metadata->data.stream_info.sample_rate;
    in->total_samples = metadata->data.stream_info.total_samples;
    if (metadata->data.stream_info.channels != 1 || metadata->data.stream_info.bits_per_sample != 16) in->problem = 1;
}

static inline void cflac_error(const FLAC__StreamDecoder *decoder, FLAC__StreamDecoderErrorStatus status, void *client_data) {
    (void)decoder; (void)status;
    cflac_input *in = (cflac_input *)client_data;
    if (in->problem == 0) in->problem = 2;
}

static inline FLAC__StreamDecoderInitStatus cflac_decoder_init(FLAC__StreamDecoder *decoder, cflac_input *in) {
    return FLAC__stream_decoder_init_stream(decoder, cflac_read, NULL, NULL, NULL, NULL, cflac_decoded, cflac_metadata, cflac_error, in);
}
