/// Owns one PocketSphinx `ps_decoder_t`. Not thread-safe: the decoder carries the state of the
/// utterance being decoded, so use it from one thread at a time.
final class SphinxDecoder {
    let raw: PocketSphinx.Decoder
    /// Kept alive with the decoder, which reads the config (and the strings it points into) until freed.
    let configuration: SphinxConfiguration

    init(configuration: SphinxConfiguration) throws {
        raw = try PocketSphinx.initDecoder(configuration.raw)
        self.configuration = configuration
    }

    deinit { PocketSphinx.freeDecoder(raw) }

    /// Decodes one utterance, fed in blocks of `blockSize` samples or (nil) in one call as a whole
    /// utterance; returns its segmentation (frames relative to the utterance start).
    func decodeUtterance(_ samples: ArraySlice<Int16>, blockSize: Int?) throws -> [PocketSphinx.Segment] {
        let fullUtterance = blockSize == nil
        let blockSize = max(1, blockSize ?? samples.count)
        try PocketSphinx.startUtterance(raw)
        do {
            try samples.withUnsafeBufferPointer { buffer in
                var offset = 0
                while offset < buffer.count {
                    let count = min(blockSize, buffer.count - offset)
                    try PocketSphinx.processRaw(raw, UnsafeBufferPointer(rebasing: buffer[offset ..< offset + count]),
                                                fullUtterance: fullUtterance)
                    offset += count
                }
            }
        } catch {
            // Leave the decoder ready for the next utterance even when feeding failed.
            try? PocketSphinx.endUtterance(raw)
            throw error
        }
        try PocketSphinx.endUtterance(raw)
        return PocketSphinx.segments(raw)
    }

    func linearProbability(_ logValue: Int32) -> Double {
        PocketSphinx.linearProbability(raw, logValue)
    }
}
