import CFLAC

/// A complete FLAC stream in memory back to its 16-bit mono samples. Anything else (stereo, 24-bit,
/// not FLAC, damaged, cut short) is a `FLACError`, never a crash.
public enum FLACDecoder {
    public static func decode(_ bytes: [UInt8]) throws(FLACError) -> (samples: [Int16], sampleRate: Int) {
        let decoder = try LibFLAC.DecoderHandle()
        return try bytes.withUnsafeBufferPointer { (buffer) throws(FLACError) -> (samples: [Int16], sampleRate: Int) in
            var input = cflac_input(bytes: buffer.baseAddress, count: buffer.count, offset: 0, samples: nil,
                                    sample_count: 0, sample_capacity: 0, sample_rate: 0, total_samples: 0,
                                    saw_streaminfo: 0, problem: 0)
            defer { free(input.samples) }
            let completed = try withUnsafeMutablePointer(to: &input) { (pointer) throws(FLACError) -> Bool in
                try LibFLAC.initialise(decoder, input: pointer)
                defer { LibFLAC.finish(decoder) }
                return LibFLAC.decodeAll(decoder)
            }
            switch input.problem {
            case 1: throw FLACError(.unsupportedFormat, "the stream is not mono 16-bit")
            case 2: throw FLACError(.corruptStream, "the stream is damaged")
            case 3: throw FLACError(.outOfMemory, "the decoded samples did not fit in memory")
            default: break
            }
            // Not FLAC, or cut short: no STREAMINFO, or fewer samples than it promised.
            guard completed, input.saw_streaminfo != 0,
                  input.total_samples == 0 || input.total_samples == UInt64(input.sample_count) else {
                throw FLACError(.corruptStream, "not a complete FLAC stream (\(input.sample_count) of \(input.total_samples) samples)")
            }
            let samples = input.samples.map { Array(UnsafeBufferPointer(start: $0, count: input.sample_count)) } ?? []
            return (samples, Int(input.sample_rate))
        }
    }
}
