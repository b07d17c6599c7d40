/// A 16-bit mono libFLAC encoder (`FLAC__StreamEncoder *`) writing one native FLAC stream into
/// memory, freed when this object goes. Lossless: `FLACDecoder` gives back exactly the samples given.
///
/// Either all at once (`encode(_:sampleRate:)`), or as audio arrives: `append` any number of times,
/// then `finish` once for the stream.
///
/// Not thread-safe (the encoder keeps state between calls); use it from one thread or queue.
public final class FLACEncoder {
    /// FLAC's default level. Level 8 made sample.wav's speech only 2.7% smaller for 1.7 times the
    /// encoding CPU (measured with sox on libFLAC 1.4.2): not worth it on every stored session.
    static let compressionLevel = 5
    /// Samples widened to Int32 (libFLAC's sample type) per call, so a long recording is never copied
    /// whole into a second, twice-as-large buffer.
    static let chunkSampleCount = 1 << 16
    /// Session audio as the server keeps it.
    static let channelCount = 1
    static let bitsPerSample = 16

    public let sampleRate: Int
    private let handle: LibFLAC.Encoder
    private let output = FLACOutputBuffer()
    private var isFinished = false

    /// An encoder for a stream whose length is not known yet: `finish` writes the sample count (and
    /// the audio's MD5) into the STREAMINFO at the start of the stream.
    public convenience init(sampleRate: Int) throws {
        try self.init(sampleRate: sampleRate, totalSampleCount: 0)
    }

    /// `totalSampleCount` (0 for unknown) goes into the STREAMINFO written first; `finish` replaces
    /// that with the final one, which counts what was really appended.
    init(sampleRate: Int, totalSampleCount: Int) throws(FLACError) {
        self.sampleRate = sampleRate
        handle = try LibFLAC.encoderNew()
        // Every property is set from here on, so a throw below runs deinit, which frees the handle.
        try LibFLAC.configure(handle, channelCount: Self.channelCount, bitsPerSample: Self.bitsPerSample, sampleRate: sampleRate,
                              compressionLevel: Self.compressionLevel, totalSampleCount: totalSampleCount)
        try LibFLAC.initStream(handle, output: output)
    }

    deinit { LibFLAC.encoderDelete(handle) }

    /// A complete FLAC stream of `samples`, its STREAMINFO declaring their count.
    public static func encode(_ samples: [Int16], sampleRate: Int) throws -> [UInt8] {
        let encoder = try FLACEncoder(sampleRate: sampleRate, totalSampleCount: samples.count)
        try encoder.append(samples)
        return try encoder.finish()
    }

    /// Encodes `samples` after those already appended (whole frames are written as they fill).
    public func append(_ samples: [Int16]) throws {
        guard !isFinished else {
            throw FLACError(.encodingFailed, function: "FLACEncoder.append", message: "the stream is already finished")
        }
        var wide = [Int32](repeating: 0, count: min(samples.count, Self.chunkSampleCount))
        var start = 0
        while start < samples.count {
            let count = min(Self.chunkSampleCount, samples.count - start)
            for index in 0..<count { wide[index] = Int32(samples[start + index]) }
            try wide.withUnsafeBufferPointer { (buffer) throws(FLACError) in
                try LibFLAC.process(handle, interleaved: UnsafeBufferPointer(rebasing: buffer[0..<count]),
                                    channelCount: Self.channelCount)
            }
            start += count
        }
    }

    /// Encodes the last, partial frame, completes the STREAMINFO (sample count, frame sizes, MD5) and
    /// returns the whole stream. Only once: afterwards `append` and `finish` throw.
    public func finish() throws -> [UInt8] {
        guard !isFinished else {
            throw FLACError(.encodingFailed, function: "FLACEncoder.finish", message: "the stream is already finished")
        }
        isFinished = true
        try LibFLAC.finish(handle)
        return output.take()
    }
}
