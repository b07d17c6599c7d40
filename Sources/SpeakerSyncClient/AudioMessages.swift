import OpusCodec

/// How a device sends its audio: the start's `encoding`.
public enum DeviceAudioEncoding: String, Sendable, CaseIterable {
    /// 16-bit PCM in chunks of `DeviceStreamConfig.chunkSeconds`.
    case pcmS16LE = "pcm_s16le"
    /// One raw Opus packet (20 ms, mono) per binary message, as wearables send.
    case opus
}

/// A recording cut into the binary messages a device sends, each with where its audio ends (in
/// samples at `sampleRate`), which paces the stream and decides when words and segments go out.
public struct AudioMessages: Sendable {
    public var encoding: DeviceAudioEncoding
    public var sampleRate: Int
    public var messages: [(bytes: [UInt8], endSample: Int)]

    public var sampleCount: Int { messages.last?.endSample ?? 0 }

    /// 16-bit PCM chunks of `chunkSamples` samples.
    public static func pcm(_ audio: [Float], sampleRate: Int, chunkSamples: Int) -> AudioMessages {
        var messages: [(bytes: [UInt8], endSample: Int)] = []
        var offset = 0
        while offset < audio.count {
            let end = min(audio.count, offset + max(1, chunkSamples))
            messages.append((PCMEncoding.encode(audio[offset..<end], as: .pcmS16LE), end))
            offset = end
        }
        return AudioMessages(encoding: .pcmS16LE, sampleRate: sampleRate, messages: messages)
    }

    /// Encoded with libopus, 20 ms mono frames at the recording's rate (which must be an Opus rate).
    /// The last frame is padded with silence.
    public static func opus(_ audio: [Float], sampleRate: Int, bitsPerSecond: Int) throws -> AudioMessages {
        let encoder = try OpusEncoder(sampleRate: sampleRate, bitsPerSecond: bitsPerSecond)
        let packets = try encoder.encode(audio)
        return AudioMessages(
            encoding: .opus, sampleRate: sampleRate,
            messages: packets.enumerated().map { ($1, ($0 + 1) * encoder.frameSize) })
    }

    /// Packets already encoded (an Ogg Opus file's), counted at `sampleRate` from their TOC bytes.
    public static func opus(packets: [[UInt8]], sampleRate: Int) throws -> AudioMessages {
        var end = 0
        var messages: [(bytes: [UInt8], endSample: Int)] = []
        for packet in packets {
            end += try OpusDecoder.sampleCount(of: packet, sampleRate: sampleRate)
            messages.append((packet, end))
        }
        return AudioMessages(encoding: .opus, sampleRate: sampleRate, messages: messages)
    }
}
