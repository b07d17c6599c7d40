import CFLAC

/// The raw libFLAC calls, each checked, turning libFLAC's statuses into `FLACError`s. One owning
/// type per handle (`EncoderHandle`, `DecoderHandle`) frees it in deinit, also when set-up fails.
enum LibFLAC {
    final class EncoderHandle {
        let pointer: UnsafeMutablePointer<FLAC__StreamEncoder>

        init() throws(FLACError) {
            guard let pointer = FLAC__stream_encoder_new() else { throw FLACError(.outOfMemory, "FLAC__stream_encoder_new failed") }
            self.pointer = pointer
        }

        deinit { FLAC__stream_encoder_delete(pointer) }
    }

    final class DecoderHandle {
        let pointer: UnsafeMutablePointer<FLAC__StreamDecoder>

        init() throws(FLACError) {
            guard let pointer = FLAC__stream_decoder_new() else { throw FLACError(.outOfMemory, "FLAC__stream_decoder_new failed") }
            self.pointer = pointer
        }

        deinit { FLAC__stream_decoder_delete(pointer) }
    }

    static func check(_ ok: FLAC__bool, _ what: String) throws(FLACError) {
        guard ok != 0 else { throw FLACError(.encoderFailed, "\(what) refused") }
    }

    /// Mono, 16-bit, `sampleRate`, compression level 5 (libFLAC's default: most of level 8's size
    /// for a fraction of its time), with the total length in STREAMINFO.
    static func configure(_ encoder: EncoderHandle, sampleRate: Int, totalSamples: Int) throws(FLACError) {
        guard (1...655_350).contains(sampleRate) else { throw FLACError(.encoderFailed, "FLAC cannot carry a sample rate of \(sampleRate) Hz") }
        try check(FLAC__stream_encoder_set_channels(encoder.pointer, 1), "set_channels(1)")
        try check(FLAC__stream_encoder_set_bits_per_sample(encoder.pointer, 16), "set_bits_per_sample(16)")
        try check(FLAC__stream_encoder_set_sample_rate(encoder.pointer, UInt32(sampleRate)), "set_sample_rate(\(sampleRate))")
        try check(FLAC__stream_encoder_set_compression_level(encoder.pointer, 5), "set_compression_level(5)")
        try check(FLAC__stream_encoder_set_total_samples_estimate(encoder.pointer, UInt64(totalSamples)), "set_total_samples_estimate")
    }

    static func initialise(_ encoder: EncoderHandle, output: UnsafeMutablePointer<cflac_output>) throws(FLACError) {
        let status = cflac_encoder_init(encoder.pointer, output)
        guard status == FLAC__STREAM_ENCODER_INIT_STATUS_OK else {
            throw FLACError(.encoderFailed, "FLAC__stream_encoder_init_stream: status \(status.rawValue)")
        }
    }

    static func process(_ encoder: EncoderHandle, _ samples: UnsafePointer<Int32>, count: Int) throws(FLACError) {
        guard FLAC__stream_encoder_process_interleaved(encoder.pointer, samples, UInt32(count)) != 0 else {
            throw FLACError(.encoderFailed, "FLAC__stream_encoder_process_interleaved: state \(FLAC__stream_encoder_get_state(encoder.pointer).rawValue)")
        }
    }

    static func finish(_ encoder: EncoderHandle) throws(FLACError) {
        guard FLAC__stream_encoder_finish(encoder.pointer) != 0 else {
            throw FLACError(.encoderFailed, "FLAC__stream_encoder_finish: state \(FLAC__stream_encoder_get_state(encoder.pointer).rawValue)")
        }
    }

    static func initialise(_ decoder: DecoderHandle, input: UnsafeMutablePointer<cflac_input>) throws(FLACError) {
        let status = cflac_decoder_init(decoder.pointer, input)
        guard status == FLAC__STREAM_DECODER_INIT_STATUS_OK else {
            throw FLACError(.corruptStream, "FLAC__stream_decoder_init_stream: status \(status.rawValue)")
        }
    }

    /// Decodes to the end; false when libFLAC stopped early (the input's `problem` says why).
    static func decodeAll(_ decoder: DecoderHandle) -> Bool {
        FLAC__stream_decoder_process_until_end_of_stream(decoder.pointer) != 0
            && FLAC__stream_decoder_get_state(decoder.pointer) == FLAC__STREAM_DECODER_END_OF_STREAM
    }

    static func finish(_ decoder: DecoderHandle) {
        _ = FLAC__stream_decoder_finish(decoder.pointer)
    }
}
