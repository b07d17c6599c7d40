import COpus

/// Every raw libopus call of the package, in one place: each turns libopus's negative return codes
/// into a thrown `OpusError`, so the owning types above never look at a C status.
enum LibOpus {
    /// The rates libopus decodes and encodes at (anything else is OPUS_BAD_ARG).
    static let sampleRates: Set<Int> = [8_000, 12_000, 16_000, 24_000, 48_000]

    static func check(_ result: Int32, _ function: String) throws(OpusError) -> Int32 {
        guard result >= 0 else {
            throw OpusError(function: function, code: result, message: String(cString: opus_strerror(result)))
        }
        return result
    }

    /// An empty buffer, which libopus's non-null parameters cannot take.
    private static func badArgument(_ function: String) -> OpusError {
        OpusError(function: function, code: OPUS_BAD_ARG, message: String(cString: opus_strerror(OPUS_BAD_ARG)))
    }

    // MARK: decoder

    static func decoderCreate(sampleRate: Int, channels: Int) throws(OpusError) -> OpaquePointer {
        var status: Int32 = OPUS_OK
        let decoder = opus_decoder_create(opus_int32(sampleRate), Int32(channels), &status)
        _ = try check(status, "opus_decoder_create")
        guard let decoder else { throw OpusError(function: "opus_decoder_create", code: OPUS_ALLOC_FAIL, message: "no decoder") }
        return decoder
    }

    static func decoderDestroy(_ decoder: OpaquePointer) {
        opus_decoder_destroy(decoder)
    }

    /// Decodes one packet into `output` (room for `maxFrameSize` samples per channel); returns the
    /// samples per channel written.
    static func decodeFloat(
        _ decoder: OpaquePointer, packet: UnsafeBufferPointer<UInt8>, output: UnsafeMutablePointer<Float>, maxFrameSize: Int
    ) throws(OpusError) -> Int {
        // A null packet asks libopus for loss concealment; an empty message is not a lost packet.
        guard packet.baseAddress != nil, !packet.isEmpty else { throw badArgument("opus_decode_float") }
        return Int(try check(
            opus_decode_float(decoder, packet.baseAddress, opus_int32(packet.count), output, Int32(maxFrameSize), 0),
            "opus_decode_float"))
    }

    // MARK: encoder

    static func encoderCreate(sampleRate: Int, channels: Int, application: Int32) throws(OpusError) -> OpaquePointer {
        var status: Int32 = OPUS_OK
        let encoder = opus_encoder_create(opus_int32(sampleRate), Int32(channels), application, &status)
        _ = try check(status, "opus_encoder_create")
        guard let encoder else { throw OpusError(function: "opus_encoder_create", code: OPUS_ALLOC_FAIL, message: "no encoder") }
        return encoder
    }

    static func encoderDestroy(_ encoder: OpaquePointer) {
        opus_encoder_destroy(encoder)
    }

    static func setBitrate(_ encoder: OpaquePointer, bitsPerSecond: Int) throws(OpusError) {
        _ = try check(copus_encoder_set_bitrate(encoder, opus_int32(bitsPerSecond)), "OPUS_SET_BITRATE")
    }

    static func lookahead(_ encoder: OpaquePointer) throws(OpusError) -> Int {
        var samples: opus_int32 = 0
        _ = try check(copus_encoder_get_lookahead(encoder, &samples), "OPUS_GET_LOOKAHEAD")
        return Int(samples)
    }

    /// Encodes one frame of `frameSize` samples per channel into `output`; returns the packet's bytes.
    static func encodeFloat(
        _ encoder: OpaquePointer, pcm: UnsafeBufferPointer<Float>, frameSize: Int, output: UnsafeMutableBufferPointer<UInt8>
    ) throws(OpusError) -> Int {
        guard let input = pcm.baseAddress, let packet = output.baseAddress else { throw badArgument("opus_encode_float") }
        return Int(try check(
            opus_encode_float(encoder, input, Int32(frameSize), packet, opus_int32(output.count)), "opus_encode_float"))
    }

    // MARK: packets

    /// Samples (per channel) that `packet` decodes to at `sampleRate`.
    static func packetSampleCount(_ packet: UnsafeBufferPointer<UInt8>, sampleRate: Int) throws(OpusError) -> Int {
        guard let bytes = packet.baseAddress else { throw badArgument("opus_packet_get_nb_samples") }
        return Int(try check(
            opus_packet_get_nb_samples(bytes, opus_int32(packet.count), opus_int32(sampleRate)), "opus_packet_get_nb_samples"))
    }
}
