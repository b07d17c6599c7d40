/// What the decoder's callbacks share with the decode in progress: the input still to be read, the
/// samples so far, the STREAMINFO, and the first thing found wrong.
///
/// libFLAC reports damage through callbacks that cannot throw, and often carries on after it
/// (resyncing past a bad frame); the first failure is kept here and thrown once libFLAC returns, so a
/// damaged stream is refused whole rather than decoded with a hole in it.
final class FLACDecodeContext {
    private let input: [UInt8]
    private var readOffset = 0
    private(set) var samples: [Int16] = []
    private(set) var streamInfo: FLACStreamInfo?
    private(set) var failure: FLACError?

    init(input: [UInt8]) {
        self.input = input
    }

    // MARK: from the callbacks

    /// Copies the next bytes of the input into `buffer`; 0 at the end.
    func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int {
        let count = min(capacity, input.count - readOffset)
        guard count > 0 else { return 0 }
        input.withUnsafeBufferPointer { source in
            buffer.update(from: source.baseAddress! + readOffset, count: count)
        }
        readOffset += count
        return count
    }

    func received(_ info: FLACStreamInfo) {
        // A second STREAMINFO is itself damage (the format allows exactly one, first).
        guard streamInfo == nil else { return fail(.corruptStream, "a second STREAMINFO block") }
        streamInfo = info
    }

    /// One decoded frame, its first channel in `firstChannel`; false stops the decode.
    func receiveFrame(channelCount: Int, bitsPerSample: Int, sampleRate: Int, firstChannel: UnsafeBufferPointer<Int32>) -> Bool {
        guard failure == nil else { return false }
        guard let info = streamInfo else {
            fail(.corruptStream, "an audio frame before any STREAMINFO")
            return false
        }
        guard info.isSixteenBitMono else {
            fail(.unsupportedFormat, Self.formatMessage(info))
            return false
        }
        // libFLAC decodes each frame by its own header, which a damaged (or hostile) stream can make
        // disagree with STREAMINFO; samples of another width or rate must not pass as this stream's.
        guard channelCount == 1, bitsPerSample == 16, sampleRate == info.sampleRate else {
            fail(.corruptStream, "a frame of \(channelCount) channels, \(bitsPerSample) bits at \(sampleRate) Hz "
                + "in a 16-bit mono stream at \(info.sampleRate) Hz")
            return false
        }
        // Known lengths bound the output, so a stream of tiny constant frames cannot make us allocate
        // far more than it says it holds.
        guard info.totalSampleCount == 0 || samples.count + firstChannel.count <= info.totalSampleCount else {
            fail(.corruptStream, "more samples than the \(info.totalSampleCount) its STREAMINFO declares")
            return false
        }
        // 16-bit frames hold values in Int16's range; truncating (not trapping) keeps a libFLAC surprise
        // from crashing the process.
        samples.append(contentsOf: firstChannel.lazy.map { Int16(truncatingIfNeeded: $0) })
        return true
    }

    /// libFLAC found damage (lost sync, a bad header, a CRC mismatch…).
    func streamError(_ message: String) {
        fail(.corruptStream, message, function: "FLAC__StreamDecoderErrorCallback")
    }

    // MARK: checks between the decoding steps

    /// After the metadata: the stream must have a STREAMINFO, and one this module reads.
    func checkHeader() throws(FLACError) {
        if let failure { throw failure }
        guard let info = streamInfo else {
            throw FLACError(.corruptStream, function: "FLACDecoder.decode", message: "not a FLAC stream (no STREAMINFO)")
        }
        guard info.isSixteenBitMono else {
            throw FLACError(.unsupportedFormat, function: "FLACDecoder.decode", message: Self.formatMessage(info))
        }
    }

    /// After the last frame: nothing went wrong on the way, and no samples are missing (a stream cut
    /// at a frame boundary decodes cleanly, only shorter).
    func checkComplete() throws(FLACError) {
        if let failure { throw failure }
        if let info = streamInfo, info.totalSampleCount != 0, samples.count != info.totalSampleCount {
            throw FLACError(.corruptStream, function: "FLACDecoder.decode",
                            message: "the stream ends after \(samples.count) of its \(info.totalSampleCount) samples")
        }
    }

    private func fail(_ code: FLACError.Code, _ message: String, function: String = "FLACDecoder.decode") {
        if failure == nil { failure = FLACError(code, function: function, message: message) }
    }

    private static func formatMessage(_ info: FLACStreamInfo) -> String {
        "a \(info.bitsPerSample)-bit stream of \(info.channelCount) channels (only 16-bit mono is read)"
    }
}
