import CFLAC

/// Lossless compression of 16-bit mono audio into a complete FLAC stream in memory (STREAMINFO with
/// the total length, then frames), as stored audio chunks keep it.
public enum FLACEncoder {
    public static func encode(_ samples: [Int16], sampleRate: Int) throws(FLACError) -> [UInt8] {
        let encoder = try LibFLAC.EncoderHandle()
        try LibFLAC.configure(encoder, sampleRate: sampleRate, totalSamples: samples.count)
        var output = cflac_output(bytes: nil, count: 0, capacity: 0, failed: 0)
        defer { free(output.bytes) }
        try withUnsafeMutablePointer(to: &output) { (pointer) throws(FLACError) in
            try LibFLAC.initialise(encoder, output: pointer)
            // libFLAC takes 32-bit samples; a block at a time keeps the widened copy small.
            let block = 4096
            var widened = [Int32](repeating: 0, count: block)
            var start = 0
            while start < samples.count {
                let count = min(block, samples.count - start)
                for i in 0..<count { widened[i] = Int32(samples[start + i]) }
                try widened.withUnsafeBufferPointer { (buffer) throws(FLACError) in
                    try LibFLAC.process(encoder, buffer.baseAddress!, count: count)
                }
                start += count
            }
            try LibFLAC.finish(encoder)
        }
        guard output.failed == 0 else { throw FLACError(.outOfMemory, "the encoded stream did not fit in memory") }
        guard let bytes = output.bytes else { return [] }
        return Array(UnsafeBufferPointer(start: bytes, count: output.count))
    }
}
