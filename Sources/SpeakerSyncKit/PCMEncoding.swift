/// Float samples to the bytes of a PCM `AudioFormat` (little-endian, mono).
public enum PCMEncoding {
    /// Opus is not PCM: `encode` refuses it (precondition); encode packets with an Opus encoder.
    public static func encode(_ samples: some Collection<Float>, as format: AudioFormat) -> [UInt8] {
        precondition(format != .opus, "Opus audio is sent as packets: SpeakerSyncSession.send(pcm:sampleCount:)")
        var bytes = [UInt8]()
        bytes.reserveCapacity(samples.count * (format.bytesPerSample ?? 0))
        switch format {
        case .pcmS16LE:
            for sample in samples {
                let clipped = max(-1, min(1, sample.isFinite ? sample : 0))
                let bits = UInt16(bitPattern: Int16((clipped * 32767).rounded()))
                bytes.append(UInt8(bits & 0xff))
                bytes.append(UInt8(bits >> 8))
            }
        case .pcmF32LE:
            for sample in samples {
                let bits = (sample.isFinite ? sample : 0).bitPattern
                for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((bits >> UInt32(shift)) & 0xff)) }
            }
        case .opus:
            break
        }
        return bytes
    }
}
