/// A libFLAC stream decoder (`FLAC__StreamDecoder *`) over one FLAC stream held in memory, freed when
/// this object goes. Reads what `FLACEncoder` writes, 16-bit mono, and refuses anything else with a
/// `FLACError` rather than guessing.
public final class FLACDecoder {
    private let handle: LibFLAC.Decoder
    /// What libFLAC's callbacks fill in (a separate object: see `FLACOutputBuffer`).
    private let context: FLACDecodeContext

    private init(bytes: [UInt8]) throws(FLACError) {
        context = FLACDecodeContext(input: bytes)
        handle = try LibFLAC.decoderNew()
        // Every property is set from here on, so a throw below runs deinit, which frees the handle.
        try LibFLAC.initStream(handle, context: context)
    }

    deinit { LibFLAC.decoderDelete(handle) }

    /// The samples and rate of a complete FLAC stream. Throws `unsupportedFormat` for a stream that is
    /// not 16-bit mono, and `corruptStream` for anything damaged, cut short or not FLAC at all.
    public static func decode(_ bytes: [UInt8]) throws -> (samples: [Int16], sampleRate: Int) {
        try FLACDecoder(bytes: bytes).decodeAll()
    }

    private func decodeAll() throws(FLACError) -> (samples: [Int16], sampleRate: Int) {
        // The header first, so a stream of another format is refused before any audio is decoded.
        try LibFLAC.processUntilEndOfMetadata(handle, context: context)
        try context.checkHeader()
        try LibFLAC.processUntilEndOfStream(handle, context: context)
        try context.checkComplete()
        try LibFLAC.finish(handle)
        // checkHeader has seen the STREAMINFO.
        return (context.samples, context.streamInfo!.sampleRate)
    }
}
