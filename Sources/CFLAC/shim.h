#include <FLAC/stream_encoder.h>
#include <FLAC/stream_decoder.h>

// libFLAC names its statuses in `extern const char *const X[]` tables, arrays of unknown size that
// Swift does not import; these look a status up on the C side.
static inline const char *cflac_encoder_init_status_string(FLAC__StreamEncoderInitStatus status) {
    return FLAC__StreamEncoderInitStatusString[status];
}

static inline const char *cflac_decoder_init_status_string(FLAC__StreamDecoderInitStatus status) {
    return FLAC__StreamDecoderInitStatusString[status];
}

static inline const char *cflac_decoder_error_status_string(FLAC__StreamDecoderErrorStatus status) {
    return FLAC__StreamDecoderErrorStatusString[status];
}
