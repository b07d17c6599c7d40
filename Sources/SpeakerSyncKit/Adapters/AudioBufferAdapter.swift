#if canImport(AVFoundation)
import AVFoundation

/// AVAudioEngine's tap buffers (any rate, any channel count) as the session's mono float samples at
/// its rate, through one `AVAudioConverter`. Create one per input format; not thread-safe (use it
/// from the tap's thread). Not compiled on the Linux machine this package is tested on.
public final class AudioBufferAdapter {
    private let converter: AVAudioConverter
    private let output: AVAudioFormat

    public init(inputFormat: AVAudioFormat, sampleRate: Int) throws {
        guard let output = AVAudioFormat(commonFormat: .pcmFormatFloat32, sampleRate: Double(sampleRate), channels: 1, interleaved: false),
              let converter = AVAudioConverter(from: inputFormat, to: output) else {
            throw CocoaError(.featureUnsupported)
        }
        self.output = output
        self.converter = converter
    }

    /// The buffer's audio, first channel, resampled to the session's rate.
    public func samples(from buffer: AVAudioPCMBuffer) throws -> [Float] {
        let ratio = output.sampleRate / buffer.format.sampleRate
        let capacity = AVAudioFrameCount(Double(buffer.frameLength) * ratio + 32)
        guard let converted = AVAudioPCMBuffer(pcmFormat: output, frameCapacity: capacity) else { return [] }
        var delivered = false
        var error: NSError?
        converter.convert(to: converted, error: &error) { _, status in
            if delivered {
                status.pointee = .noDataNow
                return nil
            }
            delivered = true
            status.pointee = .haveData
            return buffer
        }
        if let error { throw error }
        guard let channel = converted.floatChannelData?[0] else { return [] }
        return Array(UnsafeBufferPointer(start: channel, count: Int(converted.frameLength)))
    }
}

extension SpeakerSyncSession {
    /// Sends a tap buffer converted by `adapter`.
    public func send(_ buffer: AVAudioPCMBuffer, through adapter: AudioBufferAdapter) throws {
        send(samples: try adapter.samples(from: buffer))
    }
}
#endif
