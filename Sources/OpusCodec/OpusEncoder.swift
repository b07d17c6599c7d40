import COpus

/// A mono libopus encoder (`OpusEncoder *`), freed when this object goes. Takes fixed-size frames
/// of Float samples and returns one raw Opus packet per frame (what a wearable sends per message).
///
/// Not thread-safe (the encoder keeps state between frames); use it from one thread or queue.
public final class OpusEncoder {
    /// What the encoder tunes for (libopus's OPUS_APPLICATION_*).
    public enum Application: Sendable {
        /// Speech: the mode devices use for meetings.
        case voip
        case audio

        var value: Int32 {
            switch self {
            case .voip: OPUS_APPLICATION_VOIP
            case .audio: OPUS_APPLICATION_AUDIO
            }
        }
    }

    public let sampleRate: Int
    /// Samples per frame (and per packet).
    public let frameSize: Int
    /// Samples of delay the encoder adds at the start (libopus's lookahead; Ogg Opus's pre-skip).
    public let lookahead: Int
    private let handle: OpaquePointer

    /// `frameMilliseconds` must be one of Opus's frame durations (2.5, 5, 10, 20, 40, 60 ms).
    public init(sampleRate: Int, frameMilliseconds: Double = 20, bitsPerSecond: Int = 24_000, application: Application = .voip) throws {
        self.sampleRate = sampleRate
        frameSize = Int((Double(sampleRate) * frameMilliseconds / 1000).rounded())
        handle = try LibOpus.encoderCreate(sampleRate: sampleRate, channels: 1, application: application.value)
        do {
            try LibOpus.setBitrate(handle, bitsPerSecond: bitsPerSecond)
            lookahead = try LibOpus.lookahead(handle)
        } catch {
            LibOpus.encoderDestroy(handle)
            throw error
        }
    }

    deinit { LibOpus.encoderDestroy(handle) }

    /// Encodes exactly `frameSize` samples into one packet.
    public func encode(frame: ArraySlice<Float>) throws -> [UInt8] {
        precondition(frame.count == frameSize, "an Opus frame is exactly \(frameSize) samples")
        // 1275 bytes is the largest single Opus frame (RFC 6716 §3.2.1), plus the TOC byte.
        var packet = [UInt8](repeating: 0, count: 1276)
        let frameSize = frameSize
        let length = try Array(frame).withUnsafeBufferPointer { pcm in
            try packet.withUnsafeMutableBufferPointer { output in
                try LibOpus.encodeFloat(handle, pcm: pcm, frameSize: frameSize, output: output)
            }
        }
        return Array(packet[0..<length])
    }

    /// A whole recording as packets, one per frame; the last frame is padded with silence (so the
    /// decoded stream is up to one frame longer than `samples`).
    public func encode(_ samples: [Float]) throws -> [[UInt8]] {
        var packets: [[UInt8]] = []
        packets.reserveCapacity(samples.count / frameSize + 1)
        var start = 0
        while start < samples.count {
            let end = min(samples.count, start + frameSize)
            if end - start == frameSize {
                packets.append(try encode(frame: samples[start..<end]))
            } else {
                var last = Array(samples[start..<end])
                last += [Float](repeating: 0, count: frameSize - last.count)
                packets.append(try encode(frame: last[...]))
            }
            start = end
        }
        return packets
    }
}
