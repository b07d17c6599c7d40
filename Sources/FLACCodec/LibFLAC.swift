import CFLAC

/// Every raw libFLAC call of the package, in one place, and the C callbacks libFLAC calls back: each
/// turns libFLAC's false returns, states and statuses into a thrown `FLACError`, so the owning types
/// above never look at a C status.
///
/// The callbacks are C function pointers and so capture nothing: the Swift object they serve travels
/// through libFLAC's `client_data` as an unretained pointer, kept alive by the encoder or decoder
/// that owns both it and the libFLAC handle.
enum LibFLAC {
    typealias Encoder = UnsafeMutablePointer<FLAC__StreamEncoder>
    typealias Decoder = UnsafeMutablePointer<FLAC__StreamDecoder>

    // MARK: encoder

    static func encoderNew() throws(FLACError) -> Encoder {
        guard let encoder = FLAC__stream_encoder_new() else {
            throw FLACError(.outOfMemory, function: "FLAC__stream_encoder_new", message: "no encoder")
        }
        return encoder
    }

    static func encoderDelete(_ encoder: Encoder) {
        FLAC__stream_encoder_delete(encoder)
    }

    /// The settings, which libFLAC only checks together at init. The setters themselves fail only on
    /// an encoder already initialised.
    static func configure(
        _ encoder: Encoder, channelCount: Int, bitsPerSample: Int, sampleRate: Int, compressionLevel: Int,
        totalSampleCount: Int
    ) throws(FLACError) {
        // Out-of-range values would trap in the UInt32 conversions below; libFLAC's own check at init
        // then refuses the rates FLAC cannot carry.
        guard (1...Int(UInt32.max)).contains(sampleRate) else {
            throw FLACError(.invalidConfiguration, function: "FLAC__stream_encoder_set_sample_rate",
                            message: "\(sampleRate) Hz is not a sample rate")
        }
        let settings: [(String, FLAC__bool)] = [
            // The encoder can decode each frame back and compare; a lossless codec whose round trip
            // the tests check bit for bit does not need to pay that on every frame.
            ("FLAC__stream_encoder_set_verify", FLAC__stream_encoder_set_verify(encoder, 0)),
            ("FLAC__stream_encoder_set_channels", FLAC__stream_encoder_set_channels(encoder, UInt32(channelCount))),
            ("FLAC__stream_encoder_set_bits_per_sample", FLAC__stream_encoder_set_bits_per_sample(encoder, UInt32(bitsPerSample))),
            ("FLAC__stream_encoder_set_sample_rate", FLAC__stream_encoder_set_sample_rate(encoder, UInt32(sampleRate))),
            ("FLAC__stream_encoder_set_compression_level",
             FLAC__stream_encoder_set_compression_level(encoder, UInt32(compressionLevel))),
            // The STREAMINFO written first declares this count. The final one replaces it at the end
            // (see initStream), but a count known up front keeps the stream right from its first bytes.
            ("FLAC__stream_encoder_set_total_samples_estimate",
             FLAC__stream_encoder_set_total_samples_estimate(encoder, UInt64(max(0, totalSampleCount)))),
        ]
        for (function, result) in settings where result == 0 {
            throw FLACError(.invalidConfiguration, function: function, message: "the encoder is already initialised")
        }
    }

    /// Starts a native FLAC stream into `output`. No seek or tell callback: the stream is written
    /// front to back into memory, and the final STREAMINFO that libFLAC hands the metadata callback
    /// at the end is patched in there (`FLACOutputBuffer.rewriteStreamInfo`).
    static func initStream(_ encoder: Encoder, output: FLACOutputBuffer) throws(FLACError) {
        let status = FLAC__stream_encoder_init_stream(
            encoder,
            { _, buffer, byteCount, _, _, clientData in
                guard let clientData else { return FLAC__STREAM_ENCODER_WRITE_STATUS_FATAL_ERROR }
                let output = Unmanaged<FLACOutputBuffer>.fromOpaque(clientData).takeUnretainedValue()
                if let buffer, byteCount > 0 { output.append(UnsafeBufferPointer(start: buffer, count: byteCount)) }
                return FLAC__STREAM_ENCODER_WRITE_STATUS_OK
            },
            nil, nil,
            { _, metadata, clientData in
                guard let metadata, let clientData, metadata.pointee.type == FLAC__METADATA_TYPE_STREAMINFO else { return }
                let output = Unmanaged<FLACOutputBuffer>.fromOpaque(clientData).takeUnretainedValue()
                output.rewriteStreamInfo(LibFLAC.streamInfo(metadata.pointee.data.stream_info))
            },
            Unmanaged.passUnretained(output).toOpaque())
        guard status == FLAC__STREAM_ENCODER_INIT_STATUS_OK else {
            if status == FLAC__STREAM_ENCODER_INIT_STATUS_ENCODER_ERROR {
                throw encoderStateError(encoder, "FLAC__stream_encoder_init_stream")
            }
            throw FLACError(.invalidConfiguration, function: "FLAC__stream_encoder_init_stream",
                            message: String(cString: cflac_encoder_init_status_string(status)))
        }
    }

    /// Encodes whole frames of `channelCount` interleaved samples, already widened to libFLAC's 32-bit
    /// sample type (at most UInt32.max frames per call).
    static func process(_ encoder: Encoder, interleaved samples: UnsafeBufferPointer<Int32>, channelCount: Int) throws(FLACError) {
        // libFLAC only asserts its state here (the asserts are compiled out in Debian's build), so a
        // finished or failed encoder is refused before it is touched.
        try requireReady(encoder, "FLAC__stream_encoder_process_interleaved")
        guard let base = samples.baseAddress, !samples.isEmpty else { return }
        guard FLAC__stream_encoder_process_interleaved(encoder, base, UInt32(samples.count / channelCount)) != 0 else {
            throw encoderStateError(encoder, "FLAC__stream_encoder_process_interleaved")
        }
    }

    /// Encodes what is buffered as the last frame and ends the stream; the encoder is then uninitialised.
    static func finish(_ encoder: Encoder) throws(FLACError) {
        try requireReady(encoder, "FLAC__stream_encoder_finish")
        guard FLAC__stream_encoder_finish(encoder) != 0 else {
            throw encoderStateError(encoder, "FLAC__stream_encoder_finish")
        }
    }

    private static func requireReady(_ encoder: Encoder, _ function: String) throws(FLACError) {
        let state = FLAC__stream_encoder_get_state(encoder)
        guard state == FLAC__STREAM_ENCODER_OK else {
            if state == FLAC__STREAM_ENCODER_UNINITIALIZED {
                throw FLACError(.encodingFailed, function: function, message: "the stream is already finished")
            }
            throw encoderStateError(encoder, function)
        }
    }

    private static func encoderStateError(_ encoder: Encoder, _ function: String) -> FLACError {
        let state = FLAC__stream_encoder_get_state(encoder)
        let message = String(cString: FLAC__stream_encoder_get_resolved_state_string(encoder))
        return FLACError(state == FLAC__STREAM_ENCODER_MEMORY_ALLOCATION_ERROR ? .outOfMemory : .encodingFailed,
                         function: function, message: message)
    }

    // MARK: STREAMINFO

    static func streamInfo(_ info: FLAC__StreamMetadata_StreamInfo) -> FLACStreamInfo {
        FLACStreamInfo(
            minimumBlockSize: Int(info.min_blocksize), maximumBlockSize: Int(info.max_blocksize),
            minimumFrameSize: Int(info.min_framesize), maximumFrameSize: Int(info.max_framesize),
            sampleRate: Int(info.sample_rate), channelCount: Int(info.channels), bitsPerSample: Int(info.bits_per_sample),
            // STREAMINFO's count is 36 bits, so it always fits an Int.
            totalSampleCount: Int(truncatingIfNeeded: info.total_samples),
            md5Signature: withUnsafeBytes(of: info.md5sum) { Array($0) })
    }

    // MARK: decoder

    static func decoderNew() throws(FLACError) -> Decoder {
        guard let decoder = FLAC__stream_decoder_new() else {
            throw FLACError(.outOfMemory, function: "FLAC__stream_decoder_new", message: "no decoder")
        }
        return decoder
    }

    static func decoderDelete(_ decoder: Decoder) {
        FLAC__stream_decoder_delete(decoder)
    }

    /// Starts decoding the native FLAC stream that `context` reads from; only STREAMINFO is passed up
    /// (libFLAC's default), and the audio is checked against the MD5 STREAMINFO carries when it has one.
    static func initStream(_ decoder: Decoder, context: FLACDecodeContext) throws(FLACError) {
        guard FLAC__stream_decoder_set_md5_checking(decoder, 1) != 0 else {
            throw FLACError(.decodingFailed, function: "FLAC__stream_decoder_set_md5_checking",
                            message: "the decoder is already initialised")
        }
        let status = FLAC__stream_decoder_init_stream(
            decoder,
            { _, buffer, byteCount, clientData in
                guard let buffer, let byteCount, let clientData else { return FLAC__STREAM_DECODER_READ_STATUS_ABORT }
                let context = Unmanaged<FLACDecodeContext>.fromOpaque(clientData).takeUnretainedValue()
                byteCount.pointee = context.read(into: buffer, capacity: byteCount.pointee)
                return byteCount.pointee == 0 ? FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM
                    : FLAC__STREAM_DECODER_READ_STATUS_CONTINUE
            },
            // No seek, tell, length or EOF: the input is read once, front to back.
            nil, nil, nil, nil,
            { _, frame, channels, clientData in
                guard let frame, let channels, let clientData else { return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT }
                let context = Unmanaged<FLACDecodeContext>.fromOpaque(clientData).takeUnretainedValue()
                let header = frame.pointee.header
                // A frame always has at least one channel; its first holds `blocksize` samples.
                guard header.channels >= 1, let first = channels[0] else { return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT }
                let accepted = context.receiveFrame(
                    channelCount: Int(header.channels), bitsPerSample: Int(header.bits_per_sample),
                    sampleRate: Int(header.sample_rate), firstChannel: UnsafeBufferPointer(start: first, count: Int(header.blocksize)))
                return accepted ? FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE : FLAC__STREAM_DECODER_WRITE_STATUS_ABORT
            },
            { _, metadata, clientData in
                guard let metadata, let clientData, metadata.pointee.type == FLAC__METADATA_TYPE_STREAMINFO else { return }
                let context = Unmanaged<FLACDecodeContext>.fromOpaque(clientData).takeUnretainedValue()
                context.received(LibFLAC.streamInfo(metadata.pointee.data.stream_info))
            },
            { _, status, clientData in
                guard let clientData else { return }
                let context = Unmanaged<FLACDecodeContext>.fromOpaque(clientData).takeUnretainedValue()
                context.streamError(String(cString: cflac_decoder_error_status_string(status)))
            },
            Unmanaged.passUnretained(context).toOpaque())
        guard status == FLAC__STREAM_DECODER_INIT_STATUS_OK else {
            throw FLACError(status == FLAC__STREAM_DECODER_INIT_STATUS_MEMORY_ALLOCATION_ERROR ? .outOfMemory : .decodingFailed,
                            function: "FLAC__stream_decoder_init_stream",
                            message: String(cString: cflac_decoder_init_status_string(status)))
        }
    }

    /// Reads up to the first audio frame (or the end of the input). A failure the callbacks recorded
    /// in `context` is the one thrown: it says what was wrong with the stream, libFLAC's state only
    /// that the decode stopped.
    static func processUntilEndOfMetadata(_ decoder: Decoder, context: FLACDecodeContext) throws(FLACError) {
        guard FLAC__stream_decoder_process_until_end_of_metadata(decoder) != 0 else {
            throw context.failure ?? decoderStateError(decoder, "FLAC__stream_decoder_process_until_end_of_metadata")
        }
    }

    static func processUntilEndOfStream(_ decoder: Decoder, context: FLACDecodeContext) throws(FLACError) {
        guard FLAC__stream_decoder_process_until_end_of_stream(decoder) != 0 else {
            throw context.failure ?? decoderStateError(decoder, "FLAC__stream_decoder_process_until_end_of_stream")
        }
    }

    /// Ends the decode; this is where libFLAC compares the audio with STREAMINFO's MD5.
    static func finish(_ decoder: Decoder) throws(FLACError) {
        guard FLAC__stream_decoder_finish(decoder) != 0 else {
            throw FLACError(.corruptStream, function: "FLAC__stream_decoder_finish",
                            message: "the decoded audio does not match the stream's MD5 signature")
        }
    }

    private static func decoderStateError(_ decoder: Decoder, _ function: String) -> FLACError {
        let state = FLAC__stream_decoder_get_state(decoder)
        // A stream that ends cleanly makes the process calls return true; false at the end of the
        // input means it ran out inside a metadata block or a frame (an empty input included).
        if state == FLAC__STREAM_DECODER_END_OF_STREAM {
            return FLACError(.corruptStream, function: function, message: "the input ends inside a metadata block or frame")
        }
        let message = String(cString: FLAC__stream_decoder_get_resolved_state_string(decoder))
        return FLACError(state == FLAC__STREAM_DECODER_MEMORY_ALLOCATION_ERROR ? .outOfMemory : .decodingFailed,
                         function: function, message: message)
    }
}
